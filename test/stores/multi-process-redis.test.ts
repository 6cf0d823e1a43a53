import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { expectCopiesProcessedOnce, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { eventIds } from '../support/harness/sender.js';

/*
 * Four receiver processes share one Redis store; the sender delivers each of 500 events five times at
 * once, spread over the instances, and retries every non-2xx answer until it gets a 2xx. 10% of handler
 * calls fail. Each event must be completed exactly once and its handler's effect (a counter) be 1.
 */
const { run, secret, counterPrefix, keyPattern } = testRun();
const redis = createClient({ url: REDIS_URL });
redis.on('error', () => {});

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
  await redis.connect();
});

afterAll(async () => {
  await deleteKeys(redis, keyPattern);
  redis.destroy();
});

it('Redis: 500 events × 5 copies over 4 processes, 10% failing handlers: each processed exactly once', async () => {
  const ids = eventIds(run, 500);
  const prefix = `mw-test:${run}:store:`;
  const config = { store: 'redis', redisUrl: REDIS_URL, prefix, leaseMs: 5000, failRate: 0.1 } as const;
  await expectCopiesProcessedOnce(ids, {
    ...config,
    secret,
    counterUrl: REDIS_URL,
    counterPrefix,
  });
  const counters = await redis.mGet(ids.map((id) => `${counterPrefix}${id}`));
  expect(counters.filter((count) => count !== '1')).toEqual([]);
  const marks = await redis.mGet(ids.map((id) => `${prefix}live:${id}`));
  expect(marks.filter((mark) => mark !== 'done')).toEqual([]);
}, 90_000);
