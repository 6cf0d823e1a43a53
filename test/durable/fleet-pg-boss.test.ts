import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { runFleet } from './fleet.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

it('pg-boss fleet: 2 receivers, 3 workers, one of each SIGKILLed: no event lost, dead-letter exact', async () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const schema = (run: string) => `mw_boss_${run}`;
  let boss: PgBoss | undefined;
  const result = await runFleet({
    name: 'pg-boss',
    backoffMs: 1000,
    config: (run) => ({ name: 'fleet', schema: schema(run), databaseUrl: DATABASE_URL }),
    probe(run) {
      const count = async (where: string) => {
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM "${schema(run)}".job WHERE name = 'fleet' AND ${where}`,
        );
        return rows[0].n as number;
      };
      boss = new PgBoss({ connectionString: DATABASE_URL, schema: schema(run), supervise: false, max: 2 });
      boss.on('error', () => {});
      const started = boss.start();
      return {
        unsettled: () => count(`state IN ('created', 'retry', 'active')`),
        jobs: () => count('true'),
        async deadLettered() {
          await started;
          const jobs = await (boss as PgBoss).findJobs<{ event: { id: string } }>('fleet_dead_letter');
          return jobs.map((job) => job.data.event.id);
        },
      };
    },
    async cleanup(run) {
      await boss?.stop({ graceful: false });
      await pool.query(`DROP SCHEMA IF EXISTS "${schema(run)}" CASCADE`);
      await pool.end();
    },
  });
  console.log(`pg-boss fleet: ${JSON.stringify(result)}`);
  expect(result.tally.network).toBeGreaterThan(0);
}, 240_000);
