import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { bullmqQueue, createBullmqWorker as createWorker } from '../../src/durable/bullmq/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { SECRET } from '../support/unit.js';
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
