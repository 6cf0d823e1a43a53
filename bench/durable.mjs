// Durable acknowledgement speed: `npm run bench:durable` (builds, then runs `node bench/durable.mjs`).
// One receiver process (node:http adapter) per contender, fed distinct signed events by this process over
// keep-alive connections, CONCURRENCY requests in flight: answer latency p50/p99 and events/s for
//   sync ack      handlers run before the answer (MemoryDedupeStore, a no-op handler)
//   async ack     202 once claimed, handlers run after in the same process
//   BullMQ        202 once the job is in Redis (no worker running: the handoff alone is measured); again with
//                 tellDuplicates, which reads the job before adding it
//   pg-boss       202 once the job's INSERT committed in PostgreSQL
//   … by hand     the route a user writes to hand events to the engine without this library: the server's
//                 requestTimeout as the body deadline, stripe-node's constructEvent on the raw body, then
//                 `queue.add(type, event, { jobId })` or `boss.send(name, event, { id })` with the same job
//                 options as the library's, 202 once the engine answered. It does no schema check and tells no
//                 duplicate apart, so the library's extra work is all in the ratio.
// Each server first takes WARMUP rounds that are not measured (its code is compiled during them, not during a
// measured round), then the contenders take turns round by round (the machine's load changes); the median
// round is reported.
// Queues and schemas are unique to the run and removed at the end.
// Env: EVENTS (per round, 4000), ROUNDS (3), WARMUP (1), CONCURRENCY (64), ONLY (contender ids), REDIS_URL, DATABASE_URL,
// PROFILE (a folder: each server writes a V8 CPU profile there, read by bench/profile.mjs).
import { execFileSync, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BULLMQ_JOB_OPTIONS } from './hand-route.mjs';

const SECRET = 'whsec_bench_durable_3e7a1c9b5d2f8e4a6c0b';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.EVENTS ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 1);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const ALL = [
  { id: 'sync', name: 'sync ack (in-process handlers)' },
  { id: 'async', name: 'async ack (in-process, after the answer)' },
  { id: 'bullmq', name: 'BullMQ handoff (Redis)' },
  { id: 'bullmq-tell', name: 'BullMQ handoff, tellDuplicates (a read first)' },
  { id: 'bullmq-hand', name: 'BullMQ by hand: constructEvent + queue.add' },
  { id: 'pg-boss', name: 'pg-boss handoff (PostgreSQL)' },
  { id: 'pg-boss-hand', name: 'pg-boss by hand: constructEvent + boss.send' },
];
const CONTENDERS = ALL.filter(
  (contender) => !process.env.ONLY || process.env.ONLY.split(',').includes(contender.id),
);

// The receiver's default bodyTimeoutMs: the hand routes get the same deadline from their server.
const BODY_TIMEOUT_MS = 10_000;

if (process.argv[2] === 'serve' && process.argv[3].endsWith('-hand'))
  await serveByHand(process.argv[3], process.argv[4]);
else if (process.argv[2] === 'serve') await serve(process.argv[3], process.argv[4]);
else await drive();

// ---------------------------------------------------------------- receiver process
async function serve(mode, run) {
  const { createReceiver } = await import('../dist/src/index.js');
  const { createNodeHandler } = await import('../dist/adapters/node.js');
  let queue;
  let cleanup = async () => {};
  if (mode.startsWith('bullmq')) {
    const { createNodeRedisClient } = await import('bullmq');
    const { createClient } = await import('redis');
    const { bullmqQueue } = await import('../dist/src/durable/bullmq/index.js');
    const client = createClient({ url: REDIS_URL });
    queue = bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix: `mw-bench:${run}:${mode}`,
      name: 'bench',
      // Measures the handoff on whatever Redis REDIS_URL names, the test one without persistence included.
      allowVolatileRedis: true,
      tellDuplicates: mode === 'bullmq-tell',
    });
    cleanup = async () => {
      await queue.queue.obliterate({ force: true });
      await queue.close();
      client.destroy();
    };
  } else if (mode === 'pg-boss') {
    const { pgBossQueue } = await import('../dist/src/durable/pg-boss/index.js');
    const schema = `mw_bench_${run}`;
    queue = pgBossQueue({ connectionString: DATABASE_URL, schema, name: 'bench' });
    await queue.ready();
    cleanup = async () => {
      await queue.close();
      await dropSchema(schema);
    };
  }
  const receiver = createReceiver({
    secrets: SECRET,
    ...(mode === 'async' ? { ack: 'async' } : {}),
    ...(queue ? { queue } : {}),
  });
  receiver.on('message.delivered', () => {});
  const server = http.createServer({ keepAliveTimeout: 60_000 }, createNodeHandler(receiver));
  listenUntilStopped(server, async () => {
    await receiver.close({ timeoutMs: 5000 });
    await cleanup();
  });
}

// ---------------------------------------------------------------- hand route process
/** The engine's own queue, made as the library makes it, and how one event is handed to it by hand. */
async function handQueue(mode, run) {
  if (mode === 'bullmq-hand') {
    const { createNodeRedisClient, Queue } = await import('bullmq');
    const { createClient } = await import('redis');
    const client = createClient({ url: REDIS_URL });
    const queue = new Queue('bench', {
      connection: createNodeRedisClient(client),
      prefix: `mw-bench:${run}:hand`,
    });
    return {
      add: (event) => queue.add(event.type, event, { ...BULLMQ_JOB_OPTIONS, jobId: event.id }),
      cleanup: async () => {
        await queue.obliterate({ force: true });
        await queue.close();
        client.destroy();
      },
    };
  }
  const { PgBoss } = await import('pg-boss');
  const schema = `mw_bench_${run}_hand`;
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema, max: 10 });
  boss.on('error', () => {});
  await boss.start();
  const policy = { retryLimit: 4, retryDelay: 1, retryBackoff: true, deleteAfterSeconds: 7 * 24 * 3600 };
  await boss.createQueue('bench', policy);
  const { createHash } = await import('node:crypto');
  const uuidOf = (id) => {
    const hex = createHash('sha256').update(id).digest('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  };
  return {
    add: (event) => boss.send('bench', event, { id: uuidOf(event.id) }),
    cleanup: async () => {
      await boss.stop({ graceful: true });
      await dropSchema(schema);
    },
  };
}

async function serveByHand(mode, run) {
  const { default: Stripe } = await import('stripe');
  const stripe = new Stripe('sk_test_bench_not_a_real_key'); // constructEvent is local: no request is made
  const { add, cleanup } = await handQueue(mode, run);
  const answer = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer(
    { keepAliveTimeout: 60_000, requestTimeout: BODY_TIMEOUT_MS },
    (req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', async () => {
        let event;
        try {
          event = stripe.webhooks.constructEvent(
            Buffer.concat(chunks),
            req.headers['webhook-signature'],
            SECRET,
          );
        } catch {
          return answer(res, 400, { error: 'invalid signature' });
        }
        try {
          await add(event);
          answer(res, 202, { received: true });
        } catch {
          answer(res, 503, { error: 'queue unavailable' });
        }
      });
    },
  );
  listenUntilStopped(server, cleanup);
}

/**
 * Listens on a free port, tells the driver which, and on 'stop' closes the server, then `cleanup`. With PROFILE,
 * leaves the count of requests it answered beside its CPU profile, for bench/profile.mjs.
 */
function listenUntilStopped(server, cleanup) {
  let requests = 0;
  server.on('request', () => requests++);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', async (message) => {
    if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
    if (message !== 'stop') return;
    server.close();
    server.closeAllConnections();
    await cleanup();
    if (process.env.PROFILE) {
      const { name } = ALL.find(({ id }) => id === process.argv[3]);
      writeFileSync(
        join(process.env.PROFILE, `${process.pid}.requests.json`),
        JSON.stringify({ name, requests }),
      );
    }
    process.send({ stopped: true });
    process.exit(0);
  });
}

async function dropSchema(schema) {
  const pg = (await import('pg')).default;
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

// ---------------------------------------------------------------- load driver
async function drive() {
  const { createEvent, createSignedRequest } = await import('../dist/src/testing.js');
  const run = randomUUID().replaceAll('-', '').slice(0, 10);
  console.log(
    `durable bench: ${EVENTS} events × ${ROUNDS} rounds per contender after ${WARMUP} unmeasured, ${CONCURRENCY} in flight; ` +
      `load average before: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
  );
  const servers = [];
  for (const contender of CONTENDERS) servers.push({ contender, ...(await start(contender.id, run)) });
  const results = new Map(CONTENDERS.map((contender) => [contender.id, []]));
  // Signed just before each round: the timestamps stay inside the receiver's tolerance.
  const signed = () =>
    Array.from({ length: EVENTS }, () =>
      createSignedRequest(createEvent('message.delivered'), { secret: SECRET }),
    );
  try {
    for (let round = 0; round < WARMUP; round++) {
      for (const server of servers) await load(server.port, signed());
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) {
        const bodies = signed();
        const engineCpu = engineCpuReader(server.contender.id);
        const [serverBefore, engineBefore] = [await server.cpu(), await engineCpu()];
        const result = await load(server.port, bodies);
        const [serverAfter, engineAfter] = [await server.cpu(), await engineCpu()];
        result.serverCpu = (serverAfter - serverBefore) / EVENTS;
        result.engineCpu = (engineAfter - engineBefore) / EVENTS;
        results.get(server.contender.id).push(result);
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  const ratios = [
    ['bullmq', 'bullmq-hand', 'BullMQ handoff vs constructEvent + queue.add by hand (target ≥ 0.9×)'],
    ['bullmq-tell', 'bullmq-hand', 'BullMQ handoff with tellDuplicates vs the same hand route (reference)'],
    ['pg-boss', 'pg-boss-hand', 'pg-boss handoff vs constructEvent + boss.send by hand (target ≥ 0.9×)'],
  ].filter(([ours, hand]) => results.get(ours)?.length && results.get(hand)?.length);
  // Paired round by round (the two ran one after the other), then the median: the machine's drift between
  // rounds cancels out. By CPU, the receiving process's and the engine server's per event, hand over ours.
  const paired = (ours, hand, ratio) => {
    const each = results
      .get(ours)
      .map((round, i) => ratio(round, results.get(hand)[i]))
      .sort((a, b) => a - b);
    return `${each[Math.floor(each.length / 2)].toFixed(2)}× (rounds, lowest first: ${each.map((r) => r.toFixed(2)).join(', ')})`;
  };
  const ratioLines = ratios.map(
    ([ours, hand, title]) =>
      `${title}: ${paired(ours, hand, (a, b) => a.perSecond / b.perSecond)} by events/s, ` +
      `${paired(ours, hand, (a, b) => (b.serverCpu + b.engineCpu) / (a.serverCpu + a.engineCpu))} by CPU per event`,
  );
  const rows = CONTENDERS.map((contender) => {
    const rounds = [...results.get(contender.id)].sort((a, b) => a.perSecond - b.perSecond);
    const median = rounds[Math.floor(rounds.length / 2)];
    return { contender: contender.name, ...median };
  });
  console.table(
    rows.map((row) => ({
      contender: row.contender,
      'events/s': Math.round(row.perSecond),
      'p50 ms': row.p50.toFixed(2),
      'p99 ms': row.p99.toFixed(2),
      'server CPU µs/event': row.serverCpu.toFixed(0),
      'engine CPU µs/event': row.engineCpu.toFixed(0),
      answers: Object.entries(row.statuses)
        .map(([status, n]) => `${status}×${n}`)
        .join(' '),
    })),
  );
  for (const line of ratioLines) console.log(line);
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
}

/**
 * The CPU time (µs) the engine's server has used so far, read between rounds: Redis's own INFO for the BullMQ
 * contenders, every PostgreSQL process's /proc times (10 ms ticks) for pg-boss's; 0 for in-process ones.
 */
function engineCpuReader(mode) {
  if (mode.startsWith('bullmq')) {
    return async () => {
      const { hostname, port } = new URL(REDIS_URL);
      const info = execFileSync('redis-cli', ['-h', hostname, '-p', port || '6379', 'info', 'cpu'], {
        encoding: 'utf8',
      });
      const seconds = (field) => Number(info.match(new RegExp(`${field}:([0-9.]+)`))[1]);
      return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
    };
  }
  if (mode.startsWith('pg-boss')) {
    return async () => {
      let ticks = 0;
      for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          if (!stat.includes('(postgres)')) continue;
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
        } catch {} // a backend that exited meanwhile
      }
      return ticks * 10_000;
    };
  }
  return async () => 0;
}

function start(mode, run) {
  const execArgv = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
  const child = fork(fileURLToPath(import.meta.url), ['serve', mode, run], { stdio: 'inherit', execArgv });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', ({ port }) =>
      resolve({
        port,
        /** The server process's CPU time so far, in µs. */
        cpu: () =>
          new Promise((done) => {
            child.once('message', ({ cpu }) => done(cpu.user + cpu.system));
            child.send('cpu');
          }),
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.send('stop');
          }),
      }),
    );
  });
}

/** Posts every body once, CONCURRENCY at a time; the answer latency of each, and events/s over the round. */
async function load(port, signed) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies = [];
  const statuses = {};
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < signed.length) {
      const { body, headers } = signed[next++];
      const sent = performance.now();
      const status = await post(agent, port, body, headers);
      latencies.push(performance.now() - sent);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { perSecond: signed.length / seconds, p50: at(0.5), p99: at(0.99), statuses };
}

function post(agent, port, body, headers) {
  return new Promise((resolve) => {
    const request = http.request(
      { host: '127.0.0.1', port, path: '/webhooks', method: 'POST', agent, headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    request.on('error', () => resolve(0));
    request.end(body);
  });
}
