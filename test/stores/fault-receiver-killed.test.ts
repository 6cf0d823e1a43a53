import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { buildPackage } from '../support/harness/build.js';
import {
  DATABASE_URL,
  expectCompletedOnce,
  type InstanceConfig,
  REDIS_URL,
  spreadDeliveries,
  testRun,
  withInstances,
} from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { type Attempt, deliverAll, eventIds } from '../support/harness/sender.js';

/*
 * A receiver process is killed (SIGKILL) in the middle of a handler: its claim stays until the lease
 * expires, the retries meanwhile get 409 event_in_progress, and then one of them processes the event on
 * the surviving instance, once. With PostgreSQL in transactional mode, the killed process's uncommitted
 * row is rolled back by the database.
 */
const { run, secret, counterPrefix, keyPattern } = testRun();
const LEASE_MS = 2500;
const counters = createClient({ url: REDIS_URL });
counters.on('error', () => {});
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
pool.on('error', () => {});
const table = `mw_inbox_${run}`;
const effectsTable = `mw_effects_${run}`;

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
  await counters.connect();
  await new PostgresDedupeStore({ pool, table }).migrate();
  await pool.query(`CREATE TABLE ${effectsTable} (event_id text NOT NULL)`);
});

afterAll(async () => {
  await deleteKeys(counters, keyPattern);
  counters.destroy();
  await pool.query(`DROP TABLE IF EXISTS "${table}", ${effectsTable}`);
  await pool.end();
});

/** Delivers the hanging event to the victim first and kills it once its handler runs. */
async function killMidHandler(
  name: string,
  config: InstanceConfig,
): Promise<{ hangId: string; others: string[] }> {
  const hangId = `evt_${run}_${name}_hang`;
  const others = eventIds(`${run}_${name}`, 50);
  await withInstances(
    2,
    (index) => ({ ...config, ...(index === 0 ? { hangEventId: hangId } : {}) }),
    async ([victim, survivor]) => {
      if (!victim || !survivor) throw new Error('two instances expected');
      const sending = deliverAll(
        [
          { eventId: hangId, target: (attempt) => (attempt === 0 ? victim.url : survivor.url) },
          // Meanwhile the survivor goes on with other events. Not the victim: an event whose handler had
          // just finished there when it was killed, completion unrecorded, would rightly run again after its
          // lease (the at-least-once window), which is not what this test measures.
          ...spreadDeliveries(others, 1, [survivor]),
        ],
        { secret, concurrency: 10, deadline: Date.now() + 20_000 },
      );
      await victim.waitFor((message) => message.hanging === hangId);
      const killedAt = Date.now();
      victim.child.kill('SIGKILL');
      const attempts = await sending;
      expectCompletedOnce([hangId, ...others], attempts);
      const hung = attempts.filter((attempt) => attempt.eventId === hangId);
      expect(hung[0]?.code).toBe('network');
      expect(hung.some((attempt) => attempt.status === 409 && attempt.startedAt >= killedAt)).toBe(true);
      const processed = hung.find((attempt) => attempt.status === 200) as Attempt;
      // Not before the lease taken by the first attempt ran out (it was taken after that attempt started).
      expect(processed.endedAt).toBeGreaterThanOrEqual((hung[0] as Attempt).startedAt + LEASE_MS - 50);
    },
  );
  return { hangId, others };
}

describe('a receiver process killed mid-handler', () => {
  const common = { leaseMs: LEASE_MS, failRate: 0, secret, counterUrl: REDIS_URL, counterPrefix };

  it('Redis: the retry after the lease expired processes the event once', async () => {
    const config = {
      ...common,
      store: 'redis',
      redisUrl: REDIS_URL,
      prefix: `mw-test:${run}:store:`,
    } as const;
    const { hangId, others } = await killMidHandler('redis', config);
    const counts = await counters.mGet([hangId, ...others].map((id) => `${counterPrefix}${id}`));
    expect(counts.filter((count) => count !== '1')).toEqual([]);
  }, 60_000);

  it('PostgreSQL transactional: the killed write is rolled back, the retry writes the row once', async () => {
    const config = { ...common, store: 'postgres', databaseUrl: DATABASE_URL, table, effectsTable } as const;
    const { hangId, others } = await killMidHandler('pg', config);
    const rows = await pool.query(
      `SELECT event_id, count(*)::int AS n FROM ${effectsTable} GROUP BY event_id`,
    );
    expect(rows.rows.map((row) => row.event_id).sort()).toEqual([hangId, ...others].sort());
    expect(rows.rows.filter((row) => row.n !== 1)).toEqual([]);
  }, 60_000);
});
