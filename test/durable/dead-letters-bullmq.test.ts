import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { afterAll } from 'vitest';
import {
  type BullmqDurableQueue,
  bullmqDeadLetters,
  bullmqQueue,
  createBullmqWorker,
} from '../../src/durable/bullmq/index.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { describeDeadLetters } from './dead-letters-conformance.js';

const { run } = testRun();
const prefix = `mw-test:${run}:bull`;
let queues = 0;

describeDeadLetters<BullmqDurableQueue>('BullMQ', {
  queue: (attempts) =>
    bullmqQueue({
      connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
      prefix,
      name: `dl${++queues}`,
      attempts,
      backoffMs: 50,
      // The shared test Redis runs without persistence; the persistence check has its own test.
      allowVolatileRedis: true,
    }),
  worker: (receiver, queue) => createBullmqWorker({ receiver, queue, concurrency: 4 }),
  deadLetters: (queue) => bullmqDeadLetters({ queue }),
  unreachable: () => {
    // Nothing listens on port 1: the client keeps reconnecting, so the deadline answers.
    const client = createClient({ url: 'redis://127.0.0.1:1' });
    client.on('error', () => {});
    return bullmqDeadLetters({ connection: createNodeRedisClient(client), prefix, deadlineMs: 500 });
  },
});

afterAll(async () => {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await deleteKeys(redis, `${prefix}:*`);
  redis.destroy();
});
