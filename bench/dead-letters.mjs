// replay('all') on many dead letters: its time and the peak memory of the process that runs it.
// `npm run build && node bench/dead-letters.mjs`. Each case fills a queue of its own with COUNT dead letters of
// about SIZE bytes each (a receiver hands the events to the engine, a worker whose handler throws fails each
// one on its only attempt), then a fresh child process opens the dead letters as the CLI does and replays them
// all; it reports the wall time and its peak RSS. The queues are removed at the end.
// Env: CASES (all of them: bullmq:1500:500000,pg-boss:1200:500000,pg-boss:10000:300,bullmq:10000:300),
// REDIS_URL, DATABASE_URL, KEEP=1 (leave the queues in place).
import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { createNodeRedisClient } from 'bullmq';
import pg from 'pg';
import { createClient } from 'redis';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CASES = (
  process.env.CASES ?? 'bullmq:1500:500000,pg-boss:1200:500000,pg-boss:10000:300,bullmq:10000:300'
)
  .split(',')
  .map((spec) => spec.split(':'))
  .map(([engine, count, size]) => ({ engine, count: Number(count), size: Number(size) }));
const SECRET = 'whsec_bench_dead_letters_5c1e';
const run = process.env.RUN ?? randomUUID().slice(0, 8);
const prefix = `mw-bench:${run}:bull`;
const schema = `mw_bench_dl_${run}`;

/** The child: replays every dead letter of the queue, then prints what it took. */
async function measure(engine, name) {
  const started = performance.now();
  let deadLetters;
  let client;
  if (engine === 'bullmq') {
    const { bullmqDeadLetters } = await import('../dist/src/durable/bullmq/index.js');
    client = createClient({ url: REDIS_URL });
    deadLetters = bullmqDeadLetters({ connection: createNodeRedisClient(client), prefix, name });
  } else {
    const { pgBossDeadLetters } = await import('../dist/src/durable/pg-boss/index.js');
    deadLetters = pgBossDeadLetters({ connectionString: DATABASE_URL, schema, name });
  }
  const { replayed, skipped } = await deadLetters.replay('all');
  const seconds = (performance.now() - started) / 1000;
  await deadLetters.close();
  client?.destroy();
  const maxRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  console.log(JSON.stringify({ replayed: replayed.length, skipped: skipped.length, seconds, maxRssMB }));
}

function delivery(id, size) {
  const event = {
    id,
    type: 'message.delivered',
    created_at: '2026-11-26T10:00:00+00:00',
    data: { message_id: `msg_${id}`, to: '+15551234567', operator: `op_${'x'.repeat(size)}` },
  };
  const body = Buffer.from(JSON.stringify(event));
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex');
  return {
    method: 'POST',
    rawBody: body,
    headers: { 'content-type': 'application/json', 'webhook-signature': `t=${t},v1=${v1}` },
  };
}

/** Fills a queue of its own with `count` dead letters of about `size` bytes. */
async function fill({ engine, count, size }, name) {
  const { createReceiver } = await import('../dist/src/index.js');
  let queue;
  let createWorker;
  let client;
  if (engine === 'bullmq') {
    const bullmq = await import('../dist/src/durable/bullmq/index.js');
    client = createClient({ url: REDIS_URL });
    queue = bullmq.bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix,
      name,
      attempts: 1,
      allowVolatileRedis: true,
    });
    createWorker = bullmq.createBullmqWorker;
  } else {
    const pgBoss = await import('../dist/src/durable/pg-boss/index.js');
    queue = pgBoss.pgBossQueue({ connectionString: DATABASE_URL, schema, name, attempts: 1 });
    createWorker = (options) => pgBoss.createPgBossWorker({ ...options, pollingIntervalSeconds: 0.5 });
  }
  const receiver = createReceiver({ secrets: SECRET, queue });
  let failed = 0;
  let allFailed;
  const done = new Promise((resolve) => {
    allFailed = resolve;
  });
  receiver.on('message.delivered', () => {
    throw new Error('poisoned');
  });
  receiver.onError((error) => {
    if (error.code === 'handler_failed' && ++failed === count) allFailed();
  });
  const worker = await createWorker({ receiver, queue, concurrency: 16 });
  // As the service does, a delivery answered 503 (the engine busy past the handoff's deadline) is sent again.
  const deliver = async (id) => {
    for (let attempt = 1; ; attempt++) {
      const outcome = await receiver.receive(delivery(id, size));
      if (outcome.status === 202) return;
      if (outcome.status !== 503 || attempt === 5)
        throw new Error(`${id} answered ${outcome.status} ${outcome.reason}`);
    }
  };
  const inFlight = size > 10_000 ? 8 : 50;
  for (let sent = 0; sent < count; sent += inFlight) {
    const batch = Array.from(
      { length: Math.min(inFlight, count - sent) },
      (_, i) => `evt_${run}_${name}_${sent + i}`,
    );
    await Promise.all(batch.map(deliver));
  }
  await done;
  await worker.close({ timeoutMs: 10_000 });
  await queue.close();
  client?.destroy();
}

async function removeAll() {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
    if (keys.length > 0) await redis.del(keys);
  }
  redis.destroy();
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

if (process.argv[2] === 'measure') {
  await measure(process.argv[3], process.argv[4]);
} else {
  console.log(`${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, ${new Date().toISOString()}`);
  try {
    for (const [index, spec] of CASES.entries()) {
      const name = `${spec.engine === 'bullmq' ? 'dl-' : 'dl_'}${index}`;
      const filling = performance.now();
      await fill(spec, name);
      const filled = ((performance.now() - filling) / 1000).toFixed(1);
      const child = spawnSync(process.execPath, [import.meta.filename, 'measure', spec.engine, name], {
        env: { ...process.env, RUN: run },
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(child.stderr);
      const result = JSON.parse(child.stdout.trim().split('\n').at(-1));
      const rate = Math.round(result.replayed / result.seconds);
      console.log(
        `${spec.engine} ${spec.count} × ${spec.size} B (filled in ${filled} s): replay('all') ${result.replayed} in ${result.seconds.toFixed(1)} s (${rate}/s), peak RSS ${result.maxRssMB} MB`,
      );
    }
  } finally {
    if (process.env.KEEP !== '1') await removeAll();
  }
}
