// The BullMQ handoff in process, without HTTP: `npm run build && node bench/handoff.mjs`. What the receiving process
// spends per event to hand it to BullMQ, against what a user's route spends to do the same by hand
// (stripe-node's constructEvent, then `queue.add(type, event, { jobId })` with the library's job options). 64
// events in flight, each one new; the contenders take turns on batches signed before each is timed, and the
// ratios are medians of per-round ratios. Time is this process's CPU time (Redis's own work is not in it: see
// bench/durable.mjs for the whole route and the engine's CPU). Queues are unique to the run and removed at the end.
// Env: ROUNDS (9), BATCH (2000), REDIS_URL.
import { createHmac, randomUUID } from 'node:crypto';
import { createNodeRedisClient, Queue } from 'bullmq';
import { createClient } from 'redis';
import Stripe from 'stripe';
import { bullmqQueue } from '../dist/src/durable/bullmq/index.js';
import { createReceiver } from '../dist/src/index.js';
import { BULLMQ_JOB_OPTIONS } from './hand-route.mjs';

const SECRET = 'whsec_bench_handoff_7d2e9a4c1b6f3e8a5d0c';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const BATCH = Number(process.env.BATCH ?? 2000);
const IN_FLIGHT = 64;
const run = randomUUID().slice(0, 8);

let serial = 0;
function delivery(now) {
  serial++;
  const event = {
    id: `evt_${run}_${serial}`,
    type: 'message.delivered',
    created_at: '2026-11-21T10:00:00+00:00',
    data: { message_id: `msg_${serial}`, to: '+15551234567', operator: 'op_vodafone_de' },
  };
  const body = Buffer.from(JSON.stringify(event));
  const v1 = createHmac('sha256', SECRET).update(`${now}.`).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'webhook-signature': `t=${now},v1=${v1}` } };
}

const clients = [];
const connection = () => {
  const client = createClient({ url: REDIS_URL });
  clients.push(client);
  return createNodeRedisClient(client);
};

/** The library's receiver on a BullMQ queue of its own. */
function libraryContender(tellDuplicates) {
  const queue = bullmqQueue({
    connection: connection(),
    prefix: `mw-bench-handoff:${run}:${tellDuplicates ? 'tell' : 'default'}`,
    name: 'bench',
    allowVolatileRedis: true,
    tellDuplicates,
  });
  const receiver = createReceiver({ secrets: SECRET, queue });
  return {
    handOff: async ({ body, headers }) => {
      const outcome = await receiver.receive({ method: 'POST', headers, rawBody: body });
      if (outcome.status !== 202) throw new Error(`receive answered ${outcome.status} ${outcome.body}`);
    },
    close: async () => {
      await queue.queue.obliterate({ force: true });
      await receiver.close();
      await queue.close();
    },
  };
}

/** The hand route: constructEvent, then queue.add under the event's id, with the library's job options. */
function handContender() {
  const queue = new Queue('bench', { connection: connection(), prefix: `mw-bench-handoff:${run}:hand` });
  const stripe = new Stripe('sk_test_bench_not_a_real_key'); // constructEvent is local: no request is made
  return {
    handOff: async ({ body, headers }) => {
      const event = stripe.webhooks.constructEvent(body, headers['webhook-signature'], SECRET);
      await queue.add(event.type, event, { ...BULLMQ_JOB_OPTIONS, jobId: event.id });
    },
    close: async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    },
  };
}

const contenders = {
  'receiver.receive() → BullMQ (default)': libraryContender(false),
  'receiver.receive() → BullMQ, tellDuplicates': libraryContender(true),
  'constructEvent + queue.add by hand': handContender(),
};

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
  return { cpu: (used.user + used.system) / BATCH, wall: ((performance.now() - wall) * 1000) / BATCH };
}

const names = Object.keys(contenders);
for (const name of names) await sample(contenders[name]); // warm up
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(i + round) % names.length];
    samples[name].push(await sample(contenders[name]));
  }
}
for (const contender of Object.values(contenders)) await contender.close();
for (const client of clients) client.destroy();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `node ${process.version}, ${ROUNDS} rounds × ${BATCH} new events, ${IN_FLIGHT} in flight, median µs per event\n`,
);
for (const name of names) {
  const cpu = median(samples[name].map((s) => s.cpu)).toFixed(1);
  const wall = median(samples[name].map((s) => s.wall)).toFixed(1);
  console.log(`  ${name.padEnd(46)} CPU ${cpu.padStart(6)} µs   wall ${wall.padStart(6)} µs`);
}
const [ours, told, hand] = names;
const ratio = (name, field) =>
  median(samples[name].map((s, round) => samples[hand][round][field] / s[field])).toFixed(2);
console.log(
  `\nthe default handoff / by hand: ${ratio(ours, 'cpu')}× by CPU, ${ratio(ours, 'wall')}× by wall time (target ≥ 0.9×)`,
);
console.log(
  `with tellDuplicates / by hand: ${ratio(told, 'cpu')}× by CPU, ${ratio(told, 'wall')}× by wall time`,
);
