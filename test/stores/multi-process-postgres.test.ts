import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, expectCopiesProcessedOnce, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { eventIds } from '../support/harness/sender.js';

/*
 * Four receiver processes share one PostgreSQL store in transactional mode; each of 500 events is
 * delivered five times at once, 10% of handler calls fail after writing their row through ctx.tx. Each
 * event's row must exist exactly once: failed calls rolled back, the completion committed with the row.
 */
const { run, secret, counterPrefix } = testRun();
const table = `mw_inbox_${run}`;
const effectsTable = `mw_effects_${run}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
pool.on('error', () => {});

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
  await new PostgresDedupeStore({ pool, table }).migrate();
  // No unique constraint on purpose: a second write of an event must show, not be rejected.
  await pool.query(`CREATE TABLE ${effectsTable} (event_id text NOT NULL)`);
});

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}", ${effectsTable}`);
  await pool.end();
});

it('PostgreSQL transactional: 500 events × 5 copies over 4 processes: each row written exactly once', async () => {
  const ids = eventIds(run, 500);
  const config = {
    store: 'postgres',
    databaseUrl: DATABASE_URL,
    table,
    effectsTable,
    leaseMs: 5000,
  } as const;
  await expectCopiesProcessedOnce(ids, {
    ...config,
    failRate: 0.1,
    secret,
    counterUrl: REDIS_URL,
    counterPrefix,
  });
  const rows = await pool.query(`SELECT event_id, count(*)::int AS n FROM ${effectsTable} GROUP BY event_id`);
  expect(rows.rows.map((row) => row.event_id).sort()).toEqual(ids);
  expect(rows.rows.filter((row) => row.n !== 1)).toEqual([]);
  const states = await pool.query(`SELECT state, count(*)::int AS n FROM "${table}" GROUP BY state`);
  expect(states.rows).toEqual([{ state: 'completed', n: 500 }]);
}, 90_000);
