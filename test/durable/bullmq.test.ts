import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { bullmqQueue, createBullmqWorker as createWorker } from '../../src/durable/bullmq/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { gate } from '../support/gate.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { deliveredEvent, delivery, expectAccepted, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';
import { describeDurableQueue } from './queue-conformance.js';

const { run } = testRun();
const prefix = `mw-test:${run}:bull`;
let queues = 0;

describeDurableQueue('BullMQ', {
  queue: (attempts) =>
    bullmqQueue({
      connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
      prefix,
      name: `q${++queues}`,
      attempts,
      backoffMs: 50,
      countsIntervalMs: 100,
      // The shared test Redis runs without persistence; the persistence check has its own test.
      allowVolatileRedis: true,
      // The answers every engine can give to a redelivery; the default's own are tested below.
      tellDuplicates: true,
    }),
  worker: (receiver, queue, concurrency, options) =>
    createWorker({ receiver, queue, concurrency, ...options }),
  // Nothing listens on port 1: the client keeps reconnecting, so the enqueue deadline answers.
  unreachable: () => {
    const client = createClient({ url: 'redis://127.0.0.1:1' });
    client.on('error', () => {});
    return bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix,
      name: 'down',
      allowVolatileRedis: true,
    });
  },
  async cleanup() {
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    await deleteKeys(redis, `${prefix}:*`);
    redis.destroy();
  },
});

describe('BullMQ worker options', () => {
  it('refuses lock and deadline settings that cannot work, naming the option', async () => {
    const queue = bullmqQueue({
      connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
      prefix,
      name: 'options',
    });
    const receiver = createReceiver({ secrets: SECRET, queue });
    try {
      const wrong = { lockDurationMs: 500, stalledIntervalMs: 0, maxStalledCount: -1, handlerTimeoutMs: 1.5 };
      for (const [option, value] of Object.entries(wrong)) {
        const creating = createWorker({ receiver, queue, [option]: value });
        await expect(creating).rejects.toThrow(WebhookConfigError);
        await expect(creating).rejects.toThrow(new RegExp(`^${option} must be`));
      }
    } finally {
      await queue.close();
    }
  });
});

describe('BullMQ redeliveries without tellDuplicates (the default)', () => {
  it('answers 202 to every delivery of an event BullMQ holds, keeps one job, and runs it once', async () => {
    const queue = bullmqQueue({
      connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
      prefix,
      name: 'redeliveries',
      allowVolatileRedis: true,
    });
    const receiver = createReceiver({ secrets: SECRET, queue });
    let runs = 0;
    const ran = gate();
    receiver.on('message.delivered', () => {
      runs++;
      ran.open();
    });
    const event = deliveredEvent();
    try {
      // Waiting for a worker, then completed: each redelivery is acknowledged, none makes a second job.
      expectAccepted(await receiver.receive(delivery(event)), 202);
      expectAccepted(await receiver.receive(delivery(event)), 202);
      expect(await queue.queue.getJobCounts('wait')).toEqual({ wait: 1 });
      const worker = await createWorker({ receiver, queue });
      await ran.opened;
      await until(() => worker.counters().completed === 1);
      expectAccepted(await receiver.receive(delivery(event)), 202);
      await worker.close();
      expect(await queue.queue.getJobCounts('wait', 'completed')).toEqual({ wait: 0, completed: 1 });
      expect(runs).toBe(1);
    } finally {
      await receiver.close();
      await queue.close();
    }
  });

  it('refuses a tellDuplicates that is not a boolean, naming the option', () => {
    const connection = createNodeRedisClient(createClient({ url: REDIS_URL }));
    // @ts-expect-error: a string where a boolean belongs is what a config read from the environment gives
    expect(() => bullmqQueue({ connection, tellDuplicates: 'yes' })).toThrow(
      'tellDuplicates must be true or false, got "yes".',
    );
  });
});
