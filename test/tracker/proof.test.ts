import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStatusStore } from '../../src/tracker/postgres-store.js';
import { RedisStatusStore } from '../../src/tracker/redis-store.js';
import { createServiceClient } from '../../src/tracker/service-client.js';
import type { StatusStore } from '../../src/tracker/store.js';
import { DATABASE_URL, REDIS_URL } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { until } from '../support/until.js';
import { emulatorSettled, STATUS_KEYS, sendAndExpect, startLoop } from './loop.js';

/**
 * The whole loop: the emulator loses 5% of receipts, sends copies and stale first attempts; 2,000 messages
 * are sent through its API and expected; two receivers, each with its own connection to one shared status
 * store, take the webhooks in turn; once they settle, one reconcile pass. Then every status is the emulator's,
 * every transition handler ran once per message and status, and no status request broke a 429's wait.
 */
const MESSAGES = 2000;
const slow = process.env.CI_REPEAT_RUN === '1';
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function proveWith(stores: [StatusStore, StatusStore]): Promise<void> {
  const loop = await startLoop({
    stores,
    chaos: { webhookLoss: 0.05, copies: 0.1, stale: 0.05 },
    rateLimit: { requests: 400, windowSeconds: 1 },
    seed: 4242,
  });
  try {
    const { emulator, trackers, runs } = loop;
    const ids = await sendAndExpect(loop, MESSAGES, 16);
    await until(() => emulatorSettled(emulator), { timeoutMs: 60_000 });
    await emulator.idle();
    const lost = ids.filter((id) => emulator.state.messages.get(id)?.webhook_lost).length;
    await until(async () => (await trackers[0].countOpen()) === lost, { timeoutMs: 30_000 });
    const client = createServiceClient({ baseUrl: emulator.url, apiKey: STATUS_KEYS[0] });
    const summary = await trackers[1].reconcile({ client, olderThanMs: 0, limit: MESSAGES });
    expect(summary).toMatchObject({ checked: lost, moved: lost, stillOpen: 0, unknown: 0, failed: 0 });
    for (const id of ids) {
      const status = await trackers[0].status(id);
      expect(status?.status).toBe(emulator.state.messages.get(id)?.status);
      for (const step of status?.history ?? []) expect(runs.get(`${id}:${step.status}`)).toBe(1);
    }
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(emulator.state.brokenWaits).toBe(0);
  } finally {
    await loop.close();
  }
}

describe.skipIf(slow)('the tracker loop, 2,000 messages, 5% of receipts lost', () => {
  it('with a PostgreSQL status store shared by two receivers', async () => {
    const table = `mw_status_proof_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const pools = [0, 1].map(() => {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
      pool.on('error', () => {});
      return pool;
    });
    cleanups.push(async () => {
      await pools[0]?.query(`DROP TABLE IF EXISTS "${table}"`);
      await Promise.all(pools.map((pool) => pool.end()));
    });
    const stores = pools.map((pool) => new PostgresStatusStore({ pool, table })) as [
      PostgresStatusStore,
      PostgresStatusStore,
    ];
    await stores[0].migrate();
    await proveWith(stores);
  }, 120_000);

  it('with a Redis status store shared by two receivers', async () => {
    const prefix = `mw-test:${randomUUID()}:status:`;
    const clients = [0, 1].map(() => {
      const client = createClient({ url: REDIS_URL });
      client.on('error', () => {});
      return client;
    });
    await Promise.all(clients.map((client) => client.connect()));
    cleanups.push(async () => {
      await deleteKeys(clients[0] as never, `${prefix}*`);
      for (const client of clients) client.destroy();
    });
    const stores = clients.map((client) => new RedisStatusStore({ client, prefix })) as [
      RedisStatusStore,
      RedisStatusStore,
    ];
    await proveWith(stores);
  }, 120_000);
});
