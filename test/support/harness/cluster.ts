import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { until } from '../until.js';
import { buildPackage } from './build.js';
import { type ReceiverConfig, type ReceiverProcess, startReceiver } from './processes.js';
import { type Attempt, type Delivery, deliverAll, tally } from './sender.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Drops a test's PostgreSQL schema. A pg-boss instance of the test still stopping may lock its tables in
 * another order: PostgreSQL then ends one side with a deadlock, and the drop is tried again.
 */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  try {
    await until(
      async () => {
        try {
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          return true;
        } catch (error) {
          if ((error as { code?: unknown })?.code === '40P01') return false;
          throw error;
        }
      },
      { timeoutMs: 15_000, what: `the schema ${schema} dropped` },
    );
  } finally {
    await client.end();
  }
}

/** Names unique to one test run: keys and tables of parallel runs never meet. */
export function testRun() {
  const run = randomUUID().replaceAll('-', '').slice(0, 10);
  return {
    run,
    secret: `whsec_${run}`,
    counterPrefix: `mw-test:${run}:count:`,
    keyPattern: `mw-test:${run}:*`,
  };
}

export type InstanceConfig = Omit<ReceiverConfig, 'dist' | 'seed'>;

/** Starts `count` receiver processes (seeds 0…count-1), runs `work`, and always stops them. */
export async function withInstances<T>(
  count: number,
  config: InstanceConfig | ((index: number) => InstanceConfig),
  work: (instances: ReceiverProcess[]) => Promise<T>,
): Promise<T> {
  const dist = await buildPackage();
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, seed) =>
      startReceiver({ ...(typeof config === 'function' ? config(seed) : config), dist, seed }),
    ),
  );
  const instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  try {
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return await work(instances);
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
  }
}

/**
 * `copies` deliveries per event, queued next to each other so that they arrive at once on different
 * instances; each retry goes to the next instance.
 */
export function spreadDeliveries(ids: string[], copies: number, instances: ReceiverProcess[]): Delivery[] {
  return ids.flatMap((eventId, index) =>
    Array.from({ length: copies }, (_, copy) => ({
      eventId,
      target: (attempt: number) =>
        (instances[(index + copy + attempt) % instances.length] as ReceiverProcess).url,
    })),
  );
}

/** Exactly one non-duplicate 200 per event: each was completed once, none lost. */
export function expectCompletedOnce(ids: string[], attempts: Attempt[]): void {
  const processed = attempts.filter((attempt) => attempt.status === 200 && !attempt.duplicate);
  expect(processed.length, JSON.stringify(tally(attempts))).toBe(ids.length);
  expect(new Set(processed.map((attempt) => attempt.eventId))).toEqual(new Set(ids));
}

/** What an attempt may be answered while copies of one event race: anything else is a bug. */
const RACE_ANSWERS = ['200', '200 duplicate', '409 event_in_progress', '500 handler_failed'];

/**
 * The multi-process proof: 4 receiver processes share the store, each event is delivered 5 times at once
 * across them, and every non-2xx answer is retried with a fresh signature until it gets a 2xx. Expects each
 * event completed once, every answer a 200 (processed or duplicate), a 409 (a copy met another in flight) or
 * a 500 (an injected handler failure, retried: give the config a failRate), and the failures retried.
 * Whether copies meet in flight depends on scheduling, so the 409s are counted, not required; returns the
 * tally of the answers.
 */
export async function expectCopiesProcessedOnce(
  ids: string[],
  config: InstanceConfig & { secret: string },
): Promise<Record<string, number>> {
  const attempts = await withInstances(4, config, (instances) =>
    deliverAll(spreadDeliveries(ids, 5, instances), {
      secret: config.secret,
      concurrency: 40,
      deadline: Date.now() + 70_000,
    }),
  );
  expectCompletedOnce(ids, attempts);
  const counts = tally(attempts);
  expect(Object.keys(counts).filter((label) => !RACE_ANSWERS.includes(label))).toEqual([]);
  expect(counts['500 handler_failed'], 'handlers failed and were retried').toBeGreaterThan(25);
  console.info(`copies that met in flight (409): ${counts['409 event_in_progress'] ?? 0}`, counts);
  return counts;
}
