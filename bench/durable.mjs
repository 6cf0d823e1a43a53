// Durable acknowledgement speed: `npm run bench:durable` (builds, then runs `node bench/durable.mjs`).
// One receiver process (node:http adapter) per contender, fed distinct signed events by this process over
// keep-alive connections, CONCURRENCY requests in flight: answer latency p50/p99 and events/s for
//   sync ack      handlers run before the answer (MemoryDedupeStore, a no-op handler)
//   async ack     202 once claimed, handlers run after in the same process
//   BullMQ        202 once the job is in Redis (no worker running: the handoff alone is measured)
//   pg-boss       202 once the job's INSERT committed in PostgreSQL
// Contenders take turns round by round (the machine's load changes); the median round is reported.
// Queues and schemas are unique to the run and removed at the end.
// Env: EVENTS (per round, 4000), ROUNDS (3), CONCURRENCY (64), ONLY (contender ids), REDIS_URL, DATABASE_URL.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const SECRET = 'whsec_bench_durable_3e7a1c9b5d2f8e4a6c0b';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.EVENTS ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const CONTENDERS = [
  { id: 'sync', name: 'sync ack (in-process handlers)' },
  { id: 'async', name: 'async ack (in-process, after the answer)' },
  { id: 'bullmq', name: 'BullMQ handoff (Redis)' },
  { id: 'pg-boss', name: 'pg-boss handoff (PostgreSQL)' },
].filter((contender) => !process.env.ONLY || process.env.ONLY.split(',').includes(contender.id));

if (process.argv[2] === 'serve') await serve(process.argv[3], process.argv[4]);
else await drive();

// ---------------------------------------------------------------- receiver process
async function serve(mode, run) {
  const { createReceiver } = await import('../dist/src/index.js');
  const { createNodeHandler } = await import('../dist/adapters/node.js');
  let queue;
  let cleanup = async () => {};
  if (mode === 'bullmq') {
    const { createNodeRedisClient } = await import('bullmq');
    const { createClient } = await import('redis');
    const { bullmqQueue } = await import('../dist/src/durable/bullmq/index.js');
    const client = createClient({ url: REDIS_URL });
    queue = bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix: `mw-bench:${run}`,
      name: 'bench',
      // Measures the handoff on whatever Redis REDIS_URL names, the test one without persistence included.
      allowVolatileRedis: true,
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
      const pg = (await import('pg')).default;
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    };
  }
  const receiver = createReceiver({
    secrets: SECRET,
    ...(mode === 'async' ? { ack: 'async' } : {}),
    ...(queue ? { queue } : {}),
  });
  receiver.on('message.delivered', () => {});
  const server = http.createServer({ keepAliveTimeout: 60_000 }, createNodeHandler(receiver));
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', async (message) => {
    if (message !== 'stop') return;
    server.close();
    server.closeAllConnections();
    await receiver.close({ timeoutMs: 5000 });
    await cleanup();
    process.send({ stopped: true });
    process.exit(0);
  });
}

// ---------------------------------------------------------------- load driver
async function drive() {
  const { createEvent, createSignedRequest } = await import('../dist/src/testing.js');
  const run = randomUUID().replaceAll('-', '').slice(0, 10);
  console.log(
    `durable bench: ${EVENTS} events × ${ROUNDS} rounds per contender, ${CONCURRENCY} in flight; ` +
      `load average before: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
  );
  const servers = [];
  for (const contender of CONTENDERS) servers.push({ contender, ...(await start(contender.id, run)) });
  const results = new Map(CONTENDERS.map((contender) => [contender.id, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) {
        // Signed just before the round: the timestamps stay inside the receiver's tolerance.
        const bodies = Array.from({ length: EVENTS }, () =>
          createSignedRequest(createEvent('message.delivered'), { secret: SECRET }),
        );
        results.get(server.contender.id).push(await load(server.port, bodies));
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  const rows = CONTENDERS.map((contender) => {
    const rounds = results.get(contender.id).sort((a, b) => a.perSecond - b.perSecond);
    const median = rounds[Math.floor(rounds.length / 2)];
    return { contender: contender.name, ...median };
  });
  console.table(
    rows.map((row) => ({
      contender: row.contender,
      'events/s': Math.round(row.perSecond),
      'p50 ms': row.p50.toFixed(2),
      'p99 ms': row.p99.toFixed(2),
      answers: Object.entries(row.statuses)
        .map(([status, n]) => `${status}×${n}`)
        .join(' '),
    })),
  );
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
}

function start(mode, run) {
  const child = fork(fileURLToPath(import.meta.url), ['serve', mode, run], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', ({ port }) =>
      resolve({
        port,
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
