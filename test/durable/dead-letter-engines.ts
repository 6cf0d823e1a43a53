import { createNodeRedisClient } from 'bullmq';
import { PgBoss } from 'pg-boss';
import { createClient } from 'redis';
import {
  type BullmqDurableQueue,
  bullmqDeadLetters,
  bullmqQueue,
  createBullmqWorker,
} from '../../src/durable/bullmq/index.js';
import {
  createPgBossWorker,
  type PgBossDurableQueue,
  pgBossDeadLetters,
  pgBossQueue,
} from '../../src/durable/pg-boss/index.js';
import { DATABASE_URL, dropSchema, REDIS_URL } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import type { DeadLetterHarness } from './dead-letters-conformance.js';

/** BullMQ queues under `prefix`, each on a name of its own. */
export function bullmqHarness(
  prefix: string,
): DeadLetterHarness<BullmqDurableQueue> & { cleanup(): Promise<void> } {
  let queues = 0;
  return {
    queue: (attempts, options) =>
      bullmqQueue({
        ...options,
        connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
        prefix,
        name: `dl${++queues}`,
        attempts,
        backoffMs: 50,
        // The shared test Redis runs without persistence; the persistence check has its own test.
        allowVolatileRedis: true,
        // A redelivery answered 200 duplicate is how the tests see a job completed.
        tellDuplicates: true,
      }),
    worker: (receiver, queue) => createBullmqWorker({ receiver, queue, concurrency: 4 }),
    // BullMQ removes the completed jobs past their age as another job completes: the test's deliveries do.
    sweep: async () => {},
    deadLetters: (queue) => bullmqDeadLetters({ queue }),
    apart: (queue) =>
      bullmqDeadLetters({
        connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
        prefix,
        name: queue.queue.name,
      }),
    unreachable: () => {
      // Nothing listens on port 1: the client keeps reconnecting, so the deadline answers.
      const client = createClient({ url: 'redis://127.0.0.1:1' });
      client.on('error', () => {});
      return bullmqDeadLetters({ connection: createNodeRedisClient(client), prefix, deadlineMs: 500 });
    },
    async cleanup() {
      const redis = createClient({ url: REDIS_URL });
      await redis.connect();
      await deleteKeys(redis, `${prefix}:*`);
      redis.destroy();
    },
  };
}

/** pg-boss queues in `schema`, each on a name of its own. */
export function pgBossHarness(
  schema: string,
): DeadLetterHarness<PgBossDurableQueue> & { cleanup(): Promise<void> } {
  let queues = 0;
  // pg-boss's maintenance, as the queue's own PgBoss runs it once a day, here on demand.
  let sweeper: PgBoss | undefined;
  return {
    queue: (attempts, options) =>
      pgBossQueue({
        ...options,
        connectionString: DATABASE_URL,
        schema,
        name: `dl${++queues}`,
        attempts,
        backoffMs: 1000,
      }),
    worker: (receiver, queue) =>
      createPgBossWorker({ receiver, queue, concurrency: 4, pollingIntervalSeconds: 0.5 }),
    async sweep() {
      if (!sweeper) {
        sweeper = new PgBoss({
          connectionString: DATABASE_URL,
          schema,
          supervise: false,
          schedule: false,
          migrate: false,
          maintenanceIntervalSeconds: 1,
        });
        sweeper.on('error', () => {});
        await sweeper.start();
      }
      await sweeper.supervise();
    },
    deadLetters: (queue) => pgBossDeadLetters({ queue }),
    apart: (queue) => pgBossDeadLetters({ connectionString: DATABASE_URL, schema, name: queue.name }),
    unreachable: () =>
      pgBossDeadLetters({
        connectionString: 'postgres://postgres@127.0.0.1:1/test',
        schema,
        deadlineMs: 2000,
      }),
    async cleanup() {
      await sweeper?.stop({ graceful: false });
      await dropSchema(schema);
    },
  };
}
