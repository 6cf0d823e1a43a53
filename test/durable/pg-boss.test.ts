import { PgBoss } from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { createPgBossWorker as createWorker, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { DATABASE_URL, dropSchema, testRun } from '../support/harness/cluster.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { describeDurableQueue } from './queue-conformance.js';

const { run } = testRun();
const schema = `mw_boss_${run}`;
let queues = 0;

describeDurableQueue('pg-boss', {
  queue: (attempts) =>
    pgBossQueue({
      connectionString: DATABASE_URL,
      schema,
      name: `q${++queues}`,
      attempts,
      backoffMs: 1000,
      countsIntervalMs: 100,
    }),
  worker: (receiver, queue, concurrency, options) =>
    createWorker({ receiver, queue, concurrency, pollingIntervalSeconds: 0.5, ...options }),
  unreachable: () =>
    pgBossQueue({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema, name: 'down' }),
  async cleanup() {
    await dropSchema(schema);
  },
});

describe('pgBossQueue with a PgBoss of your own', () => {
  it('starts a boss given unstarted, answers 202, and leaves it running on close()', async () => {
    const boss = new PgBoss({ connectionString: DATABASE_URL, schema, max: 2 });
    boss.on('error', () => {});
    const queue = pgBossQueue({ boss, schema, name: 'unstarted' });
    try {
      const receiver = createReceiver({ secrets: SECRET, queue });
      const told: string[] = [];
      receiver.onError((error) => {
        told.push(error.message);
      });
      const event = deliveredEvent();
      const first = await receiver.receive(delivery(event));
      expect(first.status, told.join('\n')).toBe(202);
      expectAccepted(first, 202);
      expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
      await queue.close();
      // Not the queue's to stop: the boss still serves its owner.
      expect(await boss.getQueue('unstarted')).toMatchObject({ name: 'unstarted' });
    } finally {
      await boss.stop({ graceful: false });
    }
  });
});

describe('pg-boss worker options', () => {
  it('refuses a handler deadline the queue expiry does not outlast: pg-boss would run the job twice', async () => {
    const queue = pgBossQueue({ connectionString: DATABASE_URL, schema, name: 'expiry' });
    const receiver = createReceiver({ secrets: SECRET, queue });
    try {
      // pg-boss's default expiry is 15 minutes.
      const creating = createWorker({ receiver, queue, handlerTimeoutMs: 15 * 60_000 });
      await expect(creating).rejects.toThrow(WebhookConfigError);
      await expect(creating).rejects.toThrow(/handlerTimeoutMs .* expireInSeconds \(900 s\)/);
    } finally {
      await queue.close();
    }
  });
});
