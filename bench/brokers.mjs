// The RabbitMQ and NATS JetStream handoffs in process, without HTTP: `npm run build && node bench/brokers.mjs`.
// What the receiving process spends per event to hand it to the broker (the library: verify, parse, the ledger's
// row in PostgreSQL, the publish awaited until the broker confirmed it), against a route doing the same work by
// hand: stripe-node's constructEvent and the event's zod schema (as bench/hand-route.mjs checks it), the event's
// row in a PostgreSQL table (INSERT … ON CONFLICT DO NOTHING on a pool of 10, the dedupe neither broker keeps past
// a window), then a publish awaited until confirmed (RabbitMQ's sendToQueue on a confirm channel to a quorum
// queue; JetStream's publish with the event id as msgID). The same publish without the row is a reference line:
// the broker alone, which keeps no dedupe that survives a redelivery.
// IN_FLIGHT events in flight, each one new; the contenders take turns (bench/rounds.mjs) and the ratios are
// medians of per-round ratios. Queues, streams and tables are unique to the run and removed at the end.
// The NATS queue opens its connection with `noAsyncTraces`; the hand route keeps the client's default unless
// HAND_NO_ASYNC_TRACES=1 gives it the same.
// Each broker runs in a process of its own (this script again, with BROKERS set), as an app hands off to one:
// with both queues in one process the package's shared code (the walk, the ledger, pg's calls) serves two
// brokers while each hand route is code of its own, which costs the RabbitMQ handoff alone (bench/NOTES.md).
// BROKERS=rabbitmq, nats, or rabbitmq,nats (both in one process) runs only those, here.
// OTHER=<dist dir> adds another build's handoffs (say a copy of main's dist/ under tmp/) to the same rounds,
// for an A/B of a change, with its ratio to this build; OTHER=<dir>,<dir>,… adds each. A copy of this build's
// own dist/ among them is the A/B's control: its ratio to this build is what the position and the noise of
// that run give an identical build. Each contender's CPU is also given as user and system time.
// Each contender first handles WARMUPS batches unmeasured: the library's larger code is still being compiled and
// optimised through the first batches, which would otherwise count against it. A batch is 3,000 events: at
// 1,000, one round's ratio ranged from 0.69 to 1.34 and a run's median moved by about ±5% (bench/NOTES.md).
// Env: ROUNDS (15), WARMUPS (3), BATCH (3000), IN_FLIGHT (16), BENCH_TAG (a prefix of the run's names),
// HAND_NO_ASYNC_TRACES, OTHER, BROKERS, RABBITMQ_URL, NATS_URL, DATABASE_URL.
import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import pg from 'pg';
import Stripe from 'stripe';
import { natsQueue } from '../dist/src/durable/nats/index.js';
import { rabbitmqQueue } from '../dist/src/durable/rabbitmq/index.js';
import { createReceiver } from '../dist/src/index.js';
import { deliveredSchema } from './hand-route.mjs';
import { interleavedRounds, median } from './rounds.mjs';

if (process.env.BROKERS === undefined) {
  for (const broker of ['rabbitmq', 'nats']) {
    const { status } = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
      stdio: 'inherit',
      env: { ...process.env, BROKERS: broker },
    });
    if (status !== 0) process.exit(status ?? 1);
  }
  process.exit(0);
}

const SECRET = 'whsec_bench_brokers_4b1e8c2d7a9f3e6b0d5c';
const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const BATCH = Number(process.env.BATCH ?? 3000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 16);
const WARMUPS = Number(process.env.WARMUPS ?? 3);
const run = `${process.env.BENCH_TAG ?? ''}${randomUUID().replaceAll('-', '').slice(0, 8)}`;
const BROKERS = process.env.BROKERS;
const otherDirs = (process.env.OTHER ?? '').split(',').filter(Boolean);
const others = await Promise.all(
  otherDirs.map((dir) =>
    Promise.all(
      ['src/durable/rabbitmq/index.js', 'src/durable/nats/index.js', 'src/index.js'].map(
        (file) => import(pathToFileURL(resolve(dir, file)).href),
      ),
    ),
  ),
);
/** The other builds' contenders: `other build` alone, else numbered in the order OTHER lists them. */
const otherNames = others.map((_, i) => (others.length === 1 ? 'other build' : `other build ${i + 1}`));
const otherTag = (i) => (i === 0 ? 'other' : `other${i + 1}`);
const table = `mw_bench_jobs_${run}`;
const handTable = `mw_bench_hand_${run}`;

let serial = 0;
function delivery(now) {
  serial++;
  const event = {
    id: `evt_${run}_${serial}`,
    type: 'message.delivered',
    created_at: '2026-11-28T10:00:00+00:00',
    data: { message_id: `msg_${serial}`, to: '+15551234567', operator: 'op_vodafone_de' },
  };
  const body = Buffer.from(JSON.stringify(event));
  const v1 = createHmac('sha256', SECRET).update(`${now}.`).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'webhook-signature': `t=${now},v1=${v1}` } };
}

const stripe = new Stripe('sk_test_bench_not_a_real_key'); // constructEvent is local: no request is made
const schema = deliveredSchema();
/** The event, signed and of its schema, as the receiver hands it off: constructEvent, then zod's safeParse. */
function verify({ body, headers }) {
  const parsed = schema.safeParse(stripe.webhooks.constructEvent(body, headers['webhook-signature'], SECRET));
  if (!parsed.success) throw new Error('the bench signed an event its schema refuses');
  return parsed.data;
}

function library(queue, create = createReceiver) {
  const receiver = create({ secrets: SECRET, queue });
  return {
    handOff: async ({ body, headers }) => {
      const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
      if (outcome.status !== 202) throw new Error(`receive answered ${outcome.status} ${outcome.body}`);
    },
    close: async () => {
      await receiver.close();
      await queue.close();
    },
  };
}

const amqpConnection = await amqp.connect(RABBITMQ_URL);
const confirm = await amqpConnection.createConfirmChannel();
const handQueue = `mw-bench-${run}.hand`;
await confirm.assertQueue(handQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
const rabbitPublish = (event) =>
  new Promise((resolve, reject) =>
    confirm.sendToQueue(
      handQueue,
      Buffer.from(JSON.stringify(event)),
      { persistent: true, messageId: event.id, contentType: 'application/json' },
      (error) => (error ? reject(error) : resolve()),
    ),
  );
const rabbitRaw = { handOff: (delivered) => rabbitPublish(verify(delivered)) };

// The hand route's ledger: one row per event, written before the publish; a copy whose row exists is not published.
const handPool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
await handPool.query(`CREATE TABLE "${handTable}" (key text PRIMARY KEY, job text NOT NULL)`);
const recorded = async (event) =>
  (
    await handPool.query(`INSERT INTO "${handTable}" (key, job) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      event.id,
      JSON.stringify(event),
    ])
  ).rowCount === 1;
const rabbitByHand = {
  handOff: async (delivered) => {
    const event = verify(delivered);
    if (await recorded(event)) await rabbitPublish(event);
  },
};

const nc = await connect({ servers: NATS_URL, noAsyncTraces: process.env.HAND_NO_ASYNC_TRACES === '1' });
const jsm = await jetstreamManager(nc);
const handStream = `mw-bench-${run}-hand`;
await jsm.streams.add({
  name: handStream,
  subjects: [`${handStream}.jobs`],
  storage: 'file',
  retention: 'workqueue',
});
const js = jetstream(nc);
const natsPublish = (event) => js.publish(`${handStream}.jobs`, JSON.stringify(event), { msgID: event.id });
const natsRaw = { handOff: (delivered) => natsPublish(verify(delivered)) };
const natsByHand = {
  handOff: async (delivered) => {
    const event = verify(delivered);
    if (await recorded(event)) await natsPublish(event);
  },
};

const ledger = { connectionString: DATABASE_URL, table };
const routes = {
  rabbitmq: {
    'receiver.receive() → RabbitMQ': () =>
      library(rabbitmqQueue({ url: RABBITMQ_URL, name: `mw-bench-${run}.lib`, ledger })),
    'by hand: constructEvent + schema + row + confirmed publish': () => rabbitByHand,
    'reference: constructEvent + confirmed publish': () => rabbitRaw,
    ...Object.fromEntries(
      others.map((other, i) => [
        `${otherNames[i]} → RabbitMQ`,
        () =>
          library(
            other[0].rabbitmqQueue({
              url: RABBITMQ_URL,
              name: `mw-bench-${run}.${otherTag(i)}`,
              ledger: { connectionString: DATABASE_URL, table: `${table}_${otherTag(i)}` },
            }),
            other[2].createReceiver,
          ),
      ]),
    ),
  },
  nats: {
    'receiver.receive() → NATS JetStream': () =>
      library(natsQueue({ servers: NATS_URL, name: `mw-bench-${run}-lib`, ledger })),
    'by hand: constructEvent + schema + row + JetStream publish': () => natsByHand,
    'reference: constructEvent + JetStream publish': () => natsRaw,
    ...Object.fromEntries(
      others.map((other, i) => [
        `${otherNames[i]} → NATS JetStream`,
        () =>
          library(
            other[1].natsQueue({
              servers: NATS_URL,
              name: `mw-bench-${run}-${otherTag(i)}`,
              ledger: { connectionString: DATABASE_URL, table: `${table}_${otherTag(i)}` },
            }),
            other[2].createReceiver,
          ),
      ]),
    ),
  },
};
const contenders = {};
for (const broker of BROKERS.split(','))
  for (const [name, make] of Object.entries(routes[broker])) if (make) contenders[name] = make();

/** CPU and wall µs per event over one batch of new deliveries, IN_FLIGHT at a time. */
async function sample({ handOff }) {
  const now = Math.floor(Date.now() / 1000);
  const batch = Array.from({ length: BATCH }, () => delivery(now));
  let next = 0;
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batch.length) await handOff(batch[next++]);
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    cpu: (used.user + used.system) / BATCH,
    user: used.user / BATCH,
    system: used.system / BATCH,
    wall: ((performance.now() - wall) * 1000) / BATCH,
  };
}

const samples = await interleavedRounds(contenders, sample, { rounds: ROUNDS, warmups: WARMUPS });
const names = Object.keys(contenders);
console.log(
  `node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
console.log(`${ROUNDS} rounds × ${BATCH} new events, ${IN_FLIGHT} in flight, median µs per event\n`);
const width = Math.max(...names.map((name) => name.length));
for (const name of names) {
  const cpu = median(samples[name].map((s) => s.cpu)).toFixed(1);
  const wall = median(samples[name].map((s) => s.wall)).toFixed(1);
  const [user, system] = ['user', 'system'].map((field) =>
    median(samples[name].map((s) => s[field])).toFixed(1),
  );
  console.log(
    `  ${name.padEnd(width)} CPU ${cpu.padStart(6)} µs (user ${user.padStart(6)}, system ${system.padStart(5)})   wall ${wall.padStart(6)} µs`,
  );
}
const ratio = (ours, hand, field) =>
  median(samples[ours].map((s, round) => samples[hand][round][field] / s[field])).toFixed(2);
console.log('');
for (const [ours, broker] of [
  ['receiver.receive() → RabbitMQ', 'rabbitmq'],
  ...otherNames.map((name) => [`${name} → RabbitMQ`, 'rabbitmq']),
  ['receiver.receive() → NATS JetStream', 'nats'],
  ...otherNames.map((name) => [`${name} → NATS JetStream`, 'nats']),
]) {
  if (!samples[ours]) continue;
  const [, hand, raw] = Object.keys(routes[broker]);
  console.log(
    `${ours} / the same work by hand: ${ratio(ours, hand, 'cpu')}× by CPU, ${ratio(ours, hand, 'wall')}× by wall time (target ≥ 0.9×)`,
  );
  console.log(
    `${ours} / the publish alone:     ${ratio(ours, raw, 'cpu')}× by CPU, ${ratio(ours, raw, 'wall')}× by wall time`,
  );
}

for (const [ours, broker] of [
  ['receiver.receive() → RabbitMQ', 'RabbitMQ'],
  ['receiver.receive() → NATS JetStream', 'NATS JetStream'],
]) {
  otherNames.forEach((name, i) => {
    const theirs = `${name} → ${broker}`;
    if (samples[theirs])
      console.log(
        `${ours} / ${others.length === 1 ? 'the other build' : `other build ${i + 1} (${otherDirs[i]})`} (above 1: this one is cheaper): ${ratio(ours, theirs, 'cpu')}× by CPU, ${ratio(ours, theirs, 'wall')}× by wall`,
      );
  });
}

for (const name of Object.keys(contenders)) await contenders[name].close?.();
const cleanup = await amqpConnection.createChannel();
for (const queue of [
  handQueue,
  ...['lib', ...others.map((_, i) => otherTag(i))].flatMap((q) => [
    `mw-bench-${run}.${q}`,
    `mw-bench-${run}.${q}.dead`,
  ]),
])
  await cleanup.deleteQueue(queue);
await amqpConnection.close();
for (const stream of [
  handStream,
  `mw-bench-${run}-lib`,
  ...others.map((_, i) => `mw-bench-${run}-${otherTag(i)}`),
])
  await jsm.streams.delete(stream).catch(() => {});
await nc.close();
const client = new pg.Client(DATABASE_URL);
await client.connect();
await client.query(`DROP TABLE IF EXISTS "${table}"`);
for (let i = 0; i < others.length; i++) await client.query(`DROP TABLE IF EXISTS "${table}_${otherTag(i)}"`);
await client.query(`DROP TABLE IF EXISTS "${handTable}"`);
await handPool.end();
await client.end();
