import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gate } from '../support/gate.js';
import { buildPackage } from '../support/harness/build.js';
import {
  expectCompletedOnce,
  REDIS_URL,
  spreadDeliveries,
  testRun,
  withInstances,
} from '../support/harness/cluster.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { type Attempt, type Delivery, deliverAll, eventIds } from '../support/harness/sender.js';

/*
 * The store's Redis server (the test's own, on its own port) stops in the middle of a run and comes back.
 * During the outage every delivery is answered 503 store_unavailable with Retry-After and nothing is
 * processed; once it is back the retries process everything, and what was processed before stays
 * processed: nothing lost, nothing doubled. The handlers count into the shared Redis, which stays up.
 */
const { run, secret, counterPrefix, keyPattern } = testRun();
const counters = createClient({ url: REDIS_URL });
counters.on('error', () => {});
let server: RedisServer;

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
  await counters.connect();
  server = await ownRedisServer();
});

afterAll(async () => {
  await deleteKeys(counters, keyPattern);
  counters.destroy();
  await server?.remove();
});

it('Redis stopped and restarted mid-run: 503 during the outage, then everything processed exactly once', async () => {
  const before = eventIds(run, 100);
  const after = eventIds(run, 100, 100);
  const config = { store: 'redis', redisUrl: server.url, prefix: 'mw:', leaseMs: 3000, failRate: 0 } as const;
  await withInstances(2, { ...config, secret, counterUrl: REDIS_URL, counterPrefix }, async (instances) => {
    const first = await deliverAll(spreadDeliveries(before, 2, instances), {
      secret,
      concurrency: 20,
      deadline: Date.now() + 30_000,
    });
    expectCompletedOnce(before, first);

    // New events, and copies of processed ones, stream in. Redis stops in the middle of the first half,
    // with requests in flight; the second half is sent while it is down, and it stays down until 30 of those
    // attempts were answered (however fast or slow the machine), then comes back. One delivery per new
    // event: when the server goes away after a handler ran but before its completion was recorded, the
    // answer is 200 all the same, and a second copy would run the event again once the lease expired (the
    // at-least-once window of every store).
    const mixed = (events: string[], copiesOf: string[]) => {
      const copies = spreadDeliveries(copiesOf, 1, instances);
      return spreadDeliveries(events, 1, instances).flatMap((delivery, index) =>
        index < copies.length ? [delivery, copies[index] as Delivery] : [delivery],
      );
    };
    let processed = 0;
    let downAt = Number.POSITIVE_INFINITY;
    let answeredWhileDown = 0;
    const midRun = gate();
    const outageSeen = gate();
    const options = {
      secret,
      concurrency: 10,
      deadline: Date.now() + 60_000,
      onAttempt: (attempt: Attempt) => {
        if (attempt.status === 200 && ++processed === 20) midRun.open();
        if (attempt.startedAt >= downAt && ++answeredWhileDown === 30) outageSeen.open();
      },
    };
    const firstHalf = deliverAll(mixed(after.slice(0, 50), before.slice(0, 25)), options);
    await midRun.opened;
    await server.stop();
    downAt = Date.now();
    const secondHalf = deliverAll(mixed(after.slice(50), before.slice(25, 50)), options);
    await outageSeen.opened;
    const upAt = Date.now();
    await server.start();
    const second = (await Promise.all([firstHalf, secondHalf])).flat();

    const duringOutage = second.filter((attempt) => attempt.startedAt >= downAt && attempt.endedAt <= upAt);
    expect(duringOutage.length).toBeGreaterThanOrEqual(30);
    expect(new Set(duringOutage.map((attempt) => `${attempt.status} ${attempt.code}`))).toEqual(
      new Set(['503 store_unavailable']),
    );
    expect(duringOutage.every((attempt) => Number(attempt.retryAfter) > 0)).toBe(true);
    expectCompletedOnce(after, second);
    const again = second.filter((attempt) => before.includes(attempt.eventId) && attempt.status === 200);
    expect(again.length).toBe(50);
    expect(again.every((attempt) => attempt.duplicate)).toBe(true);
  });
  const counts = await counters.mGet([...before, ...after].map((id) => `${counterPrefix}${id}`));
  expect(counts.filter((count) => count !== '1')).toEqual([]);
}, 90_000);
