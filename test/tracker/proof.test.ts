import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { PostgresStatusStore } from '../../src/tracker/postgres-store.js';
import type { ReconcileSummary } from '../../src/tracker/reconcile.js';
import { RedisStatusStore } from '../../src/tracker/redis-store.js';
import type { ServiceClient } from '../../src/tracker/service-client.js';
import type { StatusStore } from '../../src/tracker/store.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, REDIS_URL } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { roundRobin } from '../support/round-robin.js';
import { until } from '../support/until.js';
import { emulatorSettled, SECRET, sendAndExpect } from './loop.js';
import { startTrackerProcess, type TrackerProcess, type TrackerProcessConfig } from './tracker-process.js';

/**
 * The whole loop across processes: the emulator loses 5% of receipts, sends copies and stale first attempts;
 * 2,000 messages are sent through its API and expected; two receiver processes, each with its own connection
 * to one shared status store, take the webhooks in turn behind a round-robin balancer; once every receipt was
 * answered, one reconcile pass in one of them. Then every status is the emulator's, every transition handler
 * ran once per message and status over both processes, and no status request broke a 429's wait.
 */
const MESSAGES = 2000;
// Each key's quota is low enough that the reconcile pass of the lost receipts is told to wait even when a
// status read takes 90 ms on a loaded machine: the waits are part of the proof. The sends spread over keys.
const RATE = { requests: 20, windowSeconds: 2 };
const SEND_KEYS = Array.from({ length: 40 }, (_, i) => `sk_test_tracker2_send_${i}`);
const STATUS_KEY = 'sk_test_tracker2_status';
const slow = process.env.CI_REPEAT_RUN === '1';
const run = randomUUID().replaceAll('-', '').slice(0, 10);
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

type StoreConfig = Omit<TrackerProcessConfig, 'dist' | 'secret'>;

async function proveWith(config: StoreConfig, store: StatusStore): Promise<void> {
  const dist = await buildPackage();
  const receivers = (await Promise.all(
    [0, 1].map(() => startTrackerProcess({ dist, secret: SECRET, ...config })),
  )) as [TrackerProcess, TrackerProcess];
  const balancer = await roundRobin(receivers.map((receiver) => receiver.url));
  const emulator = await startEmulator({
    schedule: { submitMs: 5, resultMs: 10, jitterMs: 5, failureRate: 0.1 },
    retry: { baseMs: 5, capMs: 50 },
    test: { endpoint: balancer.url, secret: SECRET, keys: [...SEND_KEYS, STATUS_KEY], rateLimit: RATE },
    chaos: { webhookLoss: 0.05, copies: 0.1, stale: 0.05 },
    seed: 4242,
  });
  try {
    const expectIn = (id: string, index: number) =>
      receivers[index % 2]?.request({ expect: { id, sentAt: Date.now() } }) as Promise<unknown>;
    const ids = await sendAndExpect({ url: emulator.url, keys: SEND_KEYS, expect: expectIn }, MESSAGES);
    await until(() => emulatorSettled(emulator), { timeoutMs: 60_000, what: 'every receipt answered' });
    const lost = ids.filter((id) => emulator.state.messages.get(id)?.webhook_lost).length;
    expect(lost).toBeGreaterThan(RATE.requests);

    const { summary, stats } = (await receivers[1].request({
      reconcile: { baseUrl: emulator.url, apiKey: STATUS_KEY, limit: MESSAGES },
    })) as { summary: ReconcileSummary; stats: ServiceClient['stats'] };
    expect(summary).toEqual({ checked: lost, moved: lost, stillOpen: 0, unknown: 0, failed: 0 });
    expect(stats.rateLimited).toBeGreaterThan(0);
    expect(emulator.state.brokenWaits).toBe(0);

    // Each process's answer comes after every transition it told before: all runs are counted now.
    await Promise.all(receivers.map((receiver) => receiver.request({ flush: {} })));
    const runs = new Map<string, number>();
    for (const [id, status] of receivers.flatMap((receiver) => receiver.transitions))
      runs.set(`${id}:${status}`, (runs.get(`${id}:${status}`) ?? 0) + 1);
    let steps = 0;
    for (const id of ids) {
      const record = await store.read(id);
      expect(record?.status).toBe(emulator.state.messages.get(id)?.status);
      for (const step of record?.history ?? []) {
        expect(runs.get(`${id}:${step.status}`), `${id} ${step.status}`).toBe(1);
        steps++;
      }
    }
    expect(runs.size).toBe(steps);
    expect([...runs.values()].filter((count) => count !== 1)).toEqual([]);
    // Both processes took webhooks, and both ran transitions.
    for (const { transitions } of receivers)
      expect(transitions.filter(([, , source]) => source === 'webhook').length).toBeGreaterThan(MESSAGES / 4);
  } finally {
    await emulator.close();
    await balancer.close();
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  }
}

describe.skipIf(slow)('the tracker loop, 2,000 messages, 5% of receipts lost, two receiver processes', () => {
  it('with a PostgreSQL status store shared by both', async () => {
    const table = `mw_status_tracker2_${run}`;
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    pool.on('error', () => {});
    cleanups.push(async () => {
      await pool.query(`DROP TABLE IF EXISTS "${table}"`);
      await pool.end();
    });
    const store = new PostgresStatusStore({ pool, table });
    await store.migrate();
    await proveWith({ store: 'postgres', databaseUrl: DATABASE_URL, table }, store);
  }, 120_000);

  it('with a Redis status store shared by both', async () => {
    const prefix = `mw-test:tracker2-${run}:status:`;
    const client = createClient({ url: REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    cleanups.push(async () => {
      await deleteKeys(client, `${prefix}*`);
      client.destroy();
    });
    await proveWith(
      { store: 'redis', redisUrl: REDIS_URL, prefix },
      new RedisStatusStore({ client, prefix }),
    );
  }, 120_000);
});
