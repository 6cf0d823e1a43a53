import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { LedgerPool } from '../../src/durable/ledger/ledger.js';
import { LOOK_AGAIN_MS, runDelivery } from '../../src/durable/ledger/run.js';
import { createNatsWorker, natsQueue } from '../../src/durable/nats/index.js';
import { createRabbitmqWorker, rabbitmqQueue } from '../../src/durable/rabbitmq/index.js';
import { rabbitmqInternals } from '../../src/durable/rabbitmq/queue.js';
import { createReceiver, type DurableQueue, type DurableWorker } from '../../src/index.js';
import { gate } from '../support/gate.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { NATS_URL } from './nats-engine.js';
import { RABBITMQ_URL } from './rabbitmq-engine.js';

/*
 * The handoff writes the ledger row while it publishes, so a worker can meet the message before the row is
 * committed: it must look again, not drop the event as the copy of a handoff that failed.
 */
const { run } = testRun();
const table = `mw_jobs_order_${run.replaceAll('-', '_')}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
});

/** The pool, with the handoff's row held back until `release` opens, and `missed` opened once a claim found no row. */
function heldPool() {
  const release = gate();
  const missed = gate();
  let claiming = false;
  const held: LedgerPool = {
    async query(text, values) {
      if (typeof text === 'object' && text.name.startsWith('mw_admit_')) await release.opened;
      const result = await pool.query(text as string, values);
      const sql = typeof text === 'string' ? text : text.text;
      if (sql.startsWith('UPDATE') && sql.includes("state = 'running'")) claiming = result.rowCount === 0;
      else if (claiming && sql.startsWith('SELECT state FROM') && result.rows.length === 0) missed.open();
      return result;
    },
    connect: () => pool.connect(),
    end: async () => {},
  };
  return { held, release, missed };
}

const brokers: [string, (held: LedgerPool) => DurableQueue, (options: never) => Promise<DurableWorker>][] = [
  [
    'RabbitMQ',
    (held) => rabbitmqQueue({ url: RABBITMQ_URL, name: `mw-${run}.order`, ledger: { pool: held, table } }),
    createRabbitmqWorker as (options: never) => Promise<DurableWorker>,
  ],
  [
    'NATS JetStream',
    (held) => natsQueue({ servers: NATS_URL, name: `mw-${run}-order`, ledger: { pool: held, table } }),
    createNatsWorker as (options: never) => Promise<DurableWorker>,
  ],
];

describe.each(brokers)('%s: the row and the publish go out together', (name, makeQueue, makeWorker) => {
  it('a message that reaches a worker before its row runs once the row is committed, and is answered 202', async () => {
    const { held, release, missed } = heldPool();
    const queue = makeQueue(held);
    closers.push(() => removeQueue(name, queue));
    const receiver = createReceiver({ secrets: SECRET, queue });
    const ran = gate();
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs++;
      ran.open();
    });
    const worker = await makeWorker({ receiver, queue, concurrency: 2 } as never);
    closers.push(() => worker.close());
    const answering = receiver.receive(delivery(deliveredEvent()));
    await missed.opened;
    expect(runs).toBe(0);
    release.open();
    expectAccepted(await answering, 202);
    await ran.opened;
    expect(runs).toBe(1);
  });
});

it('RabbitMQ: a redelivery to the receiver that handed the event off publishes no copy while its job waits', async () => {
  const queue = rabbitmqQueue({
    url: RABBITMQ_URL,
    name: `mw-${run}.again`,
    ledger: { pool: pool as never, table },
  });
  closers.push(() => removeQueue('RabbitMQ', queue));
  const receiver = createReceiver({ secrets: SECRET, queue });
  const event = deliveredEvent();
  expectAccepted(await receiver.receive(delivery(event)), 202);
  expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
  expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
  const connection = await amqp.connect(RABBITMQ_URL);
  const channel = await connection.createChannel();
  expect((await channel.checkQueue(queue.name)).messageCount).toBe(1);
  await connection.close();
});

describe('a message without a ledger row', () => {
  const ledgerWithout = {
    claim: async () => ({ run: false as const, later: false, missing: true }),
  } as unknown as Parameters<typeof runDelivery>[0]['ledger'];
  const deliveryRun = {
    ledger: ledgerWithout,
    runner: { handlerTimeoutMs: 1000 },
    orphanGraceMs: 60_000,
  } as unknown as Parameters<typeof runDelivery>[0];
  const job = { key: 'event:evt_orphan', event: { type: 'message.delivered' }, ctx: {} } as never;

  it('is looked at again while its row may still be written', async () => {
    expect(await runDelivery(deliveryRun, job, 59_000)).toEqual({ again: true, delayMs: LOOK_AGAIN_MS });
  });

  it('is dropped once its handoff can no longer write one', async () => {
    expect(await runDelivery(deliveryRun, job, 60_000)).toEqual({ again: false });
    expect(await runDelivery(deliveryRun, job, Number.POSITIVE_INFINITY)).toEqual({ again: false });
  });
});

async function removeQueue(name: string, queue: DurableQueue): Promise<void> {
  await (queue as { close(): Promise<void> }).close();
  if (name === 'RabbitMQ') {
    const connection = await amqp.connect(RABBITMQ_URL);
    const channel = await connection.createChannel();
    channel.on('error', () => {});
    for (const declared of rabbitmqInternals(queue, 'cleanup').broker.declared())
      await channel.deleteQueue(declared).catch(() => {});
    await connection.close();
    return;
  }
  const nc = await connect({ servers: NATS_URL });
  await (await jetstreamManager(nc)).streams.delete(`mw-${run}-order`).catch(() => {});
  await nc.close();
}
