// Overload proof: `npm run bench:load` (builds, then runs `node bench/load.mjs`). Loopback only, bounded in time.
// A receiver whose handler sleeps 20 ms with concurrency 20 can process 1,000 events/s; this sends it 2,000
// requests/s for 30 s (fresh events plus the retries of events it turned away, which go first), then keeps
// retrying until every event is acknowledged or DRAIN_LIMIT passes. The sender retries 503 and 409 the way the
// service does: after Retry-After (capped), with jitter, re-signing each attempt. The server (Fastify adapter,
// or node:http when SERVER=node) runs in its own process and samples its memory after a GC every second.
// Checked at the end: no crash, memory flat, distinct events sent == distinct events processed, none twice.
// Like the service, the sender holds at most MAX_IN_FLIGHT requests open and gives an attempt ATTEMPT_TIMEOUT
// before it counts as failed and is retried; a tick that finds MAX_IN_FLIGHT open sends nothing (reported).
// Env: RATE (requests/s, 2000), DURATION (s, 30), DRAIN_LIMIT (s, 90), SERVER (fastify|node),
// MAX_IN_FLIGHT (1024), ATTEMPT_TIMEOUT (s, 10).
import { fork } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const SECRET = 'whsec_bench_load_5b8e2f9a1c4d7e0b3f6a9c2d';
const RATE = Number(process.env.RATE ?? 2000);
const DURATION_S = Number(process.env.DURATION ?? 30);
const DRAIN_LIMIT_S = Number(process.env.DRAIN_LIMIT ?? 90);
const SERVER = process.env.SERVER ?? 'fastify';
const MAX_IN_FLIGHT = Number(process.env.MAX_IN_FLIGHT ?? 1024);
const ATTEMPT_TIMEOUT_MS = Number(process.env.ATTEMPT_TIMEOUT ?? 10) * 1000;
const RETRY_AFTER_CAP_S = 2;
const TICK_MS = 10;
const PATH = '/webhooks';

if (process.argv[2] === 'serve') await serve();
else await drive();

// ---------------------------------------------------------------- server process
async function serve() {
  const { createReceiver, MemoryDedupeStore } = await import('messaging-webhooks');
  const store = new MemoryDedupeStore();
  const receiver = createReceiver({
    secrets: SECRET,
    store,
    concurrency: 20,
    maxQueue: 200,
    retryAfterSeconds: 1,
  });
  const handled = new Map();
  receiver.on('message.delivered', async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    handled.set(event.id, (handled.get(event.id) ?? 0) + 1);
  });
  let listening;
  let stop;
  let used = SERVER;
  if (SERVER === 'fastify') {
    try {
      const { default: Fastify } = await import('fastify');
      const { default: webhooks } = await import('messaging-webhooks/fastify');
      const app = Fastify();
      await app.register(webhooks, { receiver, path: PATH });
      listening = await app.listen({ port: 0, host: '127.0.0.1' });
      stop = () => app.close();
    } catch (error) {
      used = `node (fastify adapter failed: ${error.message})`;
    }
  }
  if (!listening) {
    const { createNodeHandler } = await import('messaging-webhooks/node');
    const server = http.createServer(createNodeHandler(receiver));
    server.keepAliveTimeout = 60_000;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    listening = `http://127.0.0.1:${server.address().port}`;
    stop = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close({ timeoutMs: 5_000 });
    };
  }
  const started = performance.now();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  let cpuBefore = process.cpuUsage();
  let sampledAt = started;
  const sample = () => {
    globalThis.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    const { queue } = receiver.metrics();
    const cpu = process.cpuUsage(cpuBefore);
    const now = performance.now();
    // Share of one core this process used since the last sample, and how late its event loop ran.
    const cpuPercent = ((cpu.user + cpu.system) / 1000 / (now - sampledAt)) * 100;
    const loopDelayP99Ms = loopDelay.percentile(99) / 1e6;
    cpuBefore = process.cpuUsage();
    sampledAt = now;
    loopDelay.reset();
    process.send({
      sample: {
        t: (now - started) / 1000,
        rss,
        heapUsed,
        storeSize: store.size,
        cpuPercent,
        loopDelayP99Ms,
        ...queue,
      },
    });
  };
  const sampler = setInterval(sample, 1_000);
  process.on('message', async (message) => {
    if (message !== 'stop') return;
    clearInterval(sampler);
    sample();
    await stop();
    let invocations = 0;
    for (const count of handled.values()) invocations += count;
    const outcomes = {};
    for (const series of receiver.metrics().series) {
      outcomes[series.outcome] = (outcomes[series.outcome] ?? 0) + series.count;
    }
    process.send({ done: { distinct: handled.size, invocations, outcomes, ids: [...handled.keys()] } }, () =>
      process.exit(0),
    );
  });
  process.send({ ready: listening, server: used });
}

// ---------------------------------------------------------------- sender (this process)
async function drive() {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--expose-gc'] });
  const samples = [];
  let crashed = false;
  child.on('exit', (code) => {
    if (code !== 0) crashed = true;
  });
  const ready = await new Promise((resolve) => {
    child.on('message', (message) => {
      if (message.ready) resolve(message);
      if (message.sample) samples.push(message.sample);
    });
  });
  const url = new URL(PATH, ready.ready);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

  const events = new Map(); // id → { body, attempts, firstStatus, done }
  const due = []; // retries ready to send, oldest first
  const stats = { sent: 0, status: {}, errors: 0, timeouts: 0, skipped: 0, latencies: [], maxOutstanding: 0 };
  let outstanding = 0;
  let sequence = 0;

  const send = (id) => {
    const event = events.get(id);
    event.attempts++;
    stats.sent++;
    outstanding++;
    stats.maxOutstanding = Math.max(stats.maxOutstanding, outstanding);
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac('sha256', SECRET).update(`${t}.`).update(event.body).digest('hex');
    const begun = performance.now();
    const request = http.request(url, {
      method: 'POST',
      agent,
      timeout: ATTEMPT_TIMEOUT_MS,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(event.body),
        'webhook-signature': `t=${t},v1=${v1}`,
      },
    });
    const retry = (seconds) => {
      // Never before Retry-After; jitter spreads the retries of one burst over as long again, as the service does.
      const delay = Math.min(seconds, RETRY_AFTER_CAP_S) * 1000 * (1 + Math.random());
      setTimeout(() => due.push(id), delay);
    };
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => {
        outstanding--;
        const code = response.statusCode;
        stats.status[code] = (stats.status[code] ?? 0) + 1;
        event.firstStatus ??= code;
        if (code === 200) {
          event.done = true;
          stats.latencies.push(performance.now() - begun);
        } else if (code === 503 || code === 409) {
          retry(Number(response.headers['retry-after'] ?? 1));
        } else {
          event.failed = code;
        }
      });
    });
    request.on('timeout', () => {
      stats.timeouts++;
      request.destroy(new Error('attempt timed out'));
    });
    request.on('error', () => {
      outstanding--;
      stats.errors++;
      retry(1);
    });
    request.end(event.body);
  };

  const fresh = () => {
    const id = `evt_LOAD${String(++sequence).padStart(22, '0')}`;
    const body = JSON.stringify({
      id,
      type: 'message.delivered',
      created_at: new Date().toISOString().replace('Z', '+00:00'),
      data: {
        message_id: `msg_LOAD${String(sequence).padStart(22, '0')}`,
        to: '+15550100000',
        operator: 'op_bench',
      },
    });
    events.set(id, { body, attempts: 0, firstStatus: undefined, done: false });
    send(id);
  };

  const senderDelay = monitorEventLoopDelay({ resolution: 10 });
  senderDelay.enable();
  const senderCpu = process.cpuUsage();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  let budgetSent = 0;
  const pending = () => [...events.values()].some((event) => !event.done && event.failed === undefined);
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = elapsed();
      const sending = now < DURATION_S;
      if (!sending && (!pending() || now > DURATION_S + DRAIN_LIMIT_S)) {
        clearInterval(timer);
        resolve();
        return;
      }
      // Requests owed since the start at RATE; retries first, then fresh events while the 30 s last.
      let budget = Math.floor(now * RATE) - budgetSent;
      while (budget > 0 && (due.length > 0 || sending)) {
        if (outstanding >= MAX_IN_FLIGHT) {
          if (sending) stats.skipped += budget;
          break;
        }
        if (due.length > 0) send(due.shift());
        else fresh();
        budget--;
        budgetSent++;
      }
      budgetSent = Math.max(budgetSent, Math.floor(now * RATE) - RATE * (TICK_MS / 1000)); // no backlog of budget
    }, TICK_MS);
  });
  const totalSeconds = elapsed();
  const { user, system } = process.cpuUsage(senderCpu);
  const senderCpuPercent = ((user + system) / 1e6 / totalSeconds) * 100;

  const done = await new Promise((resolve) => {
    child.on('message', (message) => {
      if (message.done) resolve(message.done);
    });
    child.send('stop');
  });
  agent.destroy();

  // ------------------------------------------------------------ verdict
  const all = [...events.values()];
  const processedIds = new Set(done.ids);
  const lost = [...events.keys()].filter((id) => !processedIds.has(id));
  const firstTry = all.filter((event) => event.firstStatus === 200).length;
  const afterRetry = all.filter((event) => event.done && event.firstStatus !== 200).length;
  const maxAttempts = Math.max(...all.map((event) => event.attempts));
  const sendPhase = samples.filter((sample) => sample.t >= 2 && sample.t <= DURATION_S);
  const mb = (bytes) => (bytes / 1048576).toFixed(1);
  const at = (list, t) =>
    list.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best), list[0]);
  const latency = stats.latencies.sort((a, b) => a - b);
  const pct = (p) =>
    latency[Math.min(latency.length - 1, Math.floor((p / 100) * latency.length))]?.toFixed(1);

  console.log(
    `server: ${ready.server}, ${RATE} req/s for ${DURATION_S} s, handler 20 ms, concurrency 20, maxQueue 200`,
  );
  console.log(
    `run: ${totalSeconds.toFixed(1)} s in all (send ${DURATION_S} s + drain until all acknowledged)`,
  );
  console.log(
    `requests: ${stats.sent} sent (${(stats.sent / totalSeconds).toFixed(0)}/s over the run), statuses ${JSON.stringify(stats.status)}, network errors ${stats.errors} (of which attempt timeouts ${stats.timeouts}), most in flight ${stats.maxOutstanding}; ${stats.skipped} sends skipped while ${MAX_IN_FLIGHT} were in flight`,
  );
  console.log(
    `events: ${events.size} distinct sent; ${firstTry} processed at the first attempt, ${afterRetry} answered 503/409 first and processed on a retry; most attempts for one event ${maxAttempts}`,
  );
  console.log(
    `server: ${done.distinct} distinct events handled, ${done.invocations} handler runs (${done.invocations - done.distinct} duplicates); receiver outcomes ${JSON.stringify(done.outcomes)}`,
  );
  console.log(
    `sender: ${senderCpuPercent.toFixed(0)}% of one core, event loop delay p99 ${(senderDelay.percentile(99) / 1e6).toFixed(0)} ms (its latencies include it)`,
  );
  console.log(
    `latency of 200 answers: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latency.at(-1)?.toFixed(1)} ms`,
  );
  console.log(
    'server samples (t s: rss MB / heapUsed MB after GC / dedupe store entries / CPU % of one core / event loop delay p99 ms):',
  );
  const shown = new Set();
  for (const t of [2, 5, 10, 15, 20, 25, 30, 45, 60, 90, 120]) {
    const s = at(samples, t);
    if (!s || shown.has(s)) continue;
    shown.add(s);
    console.log(
      `  ${s.t.toFixed(0).padStart(3)}: ${mb(s.rss)} / ${mb(s.heapUsed)} / ${s.storeSize} / ${s.cpuPercent.toFixed(0)} / ${s.loopDelayP99Ms.toFixed(0)}`,
    );
  }
  const heap = sendPhase.map((s) => s.heapUsed);
  const rss = sendPhase.map((s) => s.rss);
  console.log(
    `  during sending (t 2–${DURATION_S} s): heapUsed ${mb(Math.min(...heap))}–${mb(Math.max(...heap))} MB, rss ${mb(Math.min(...rss))}–${mb(Math.max(...rss))} MB`,
  );
  const failures = [];
  if (crashed) failures.push('the server process crashed');
  if (lost.length > 0) failures.push(`${lost.length} events never processed`);
  if (done.distinct !== events.size)
    failures.push(`sent ${events.size} distinct events, server handled ${done.distinct}`);
  if (done.invocations !== done.distinct)
    failures.push(`${done.invocations - done.distinct} events handled twice`);
  const other = all.filter((event) => event.failed !== undefined).length;
  if (other > 0)
    failures.push(`${other} events answered with a status that is neither 200 nor a retryable 503/409`);
  console.log(
    failures.length === 0
      ? 'OK: nothing lost, nothing processed twice, no crash'
      : `FAILED: ${failures.join('; ')}`,
  );
  process.exitCode = failures.length === 0 ? 0 : 1;
}
