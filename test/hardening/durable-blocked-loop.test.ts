import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFleet } from '../durable/fleet.js';
import { bullmqFleet } from '../durable/fleet-bullmq-engine.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL } from '../support/harness/cluster.js';

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});
afterAll(() => pool.end());

it('BullMQ fleet with the transactional inbox: loops blocked past the lock, workers killed, no effect doubled', async () => {
  const tables = (run: string) => ({ effects: `mw_effects_${run}`, inbox: `mw_inbox_${run}` });
  const engine = bullmqFleet();
  const result = await runFleet({
    ...engine,
    workerConfig(run, worker) {
      const { effects, inbox } = tables(run);
      return {
        databaseUrl: DATABASE_URL,
        effects,
        inbox,
        leaseMs: 5000,
        // BullMQ renews a lock every half of it: a 3 s blocked loop loses a 2 s lock, and the job runs again.
        lockDurationMs: 2000,
        // Every blocked loop costs its jobs a lock: past maxStalledCount (BullMQ's default 1) a job whose
        // worker froze twice would go to the dead-letter, its effect committed (onError: job_stalled).
        maxStalledCount: 5,
        ...(worker === 1 ? { blockEvery: 40, blockLoopMs: 3000 } : {}),
      };
    },
    async effects(run) {
      const { rows } = await pool.query(
        `SELECT event_id, count(*)::int AS n FROM ${tables(run).effects} GROUP BY event_id`,
      );
      return Object.fromEntries(rows.map((row) => [row.event_id as string, row.n as number]));
    },
    async cleanup(run) {
      await engine.cleanup(run);
      const { effects, inbox } = tables(run);
      await pool.query(`DROP TABLE IF EXISTS ${effects}, ${inbox}`);
    },
    async prepare(run) {
      await pool.query(`CREATE TABLE ${tables(run).effects} (event_id text NOT NULL, worker int)`);
    },
  });
  console.log(`BullMQ fleet with inbox: ${JSON.stringify(result)}`);
  expect(result.blocked).toBeGreaterThan(0);
  expect(result.doubledEffects).toEqual([]);
  // Each blocked run lost its lock: told as such, not as a lost Redis connection. (A blocked loop can also
  // hold an inbox claim past the store's deadline: that is store_unavailable, PostgreSQL's, and retried.)
  expect(result.workerErrors.lock_lost).toBeGreaterThan(0);
  expect(result.workerErrors.queue_unavailable).toBeUndefined();
}, 240_000);
