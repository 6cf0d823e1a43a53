import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { TypeOrmDedupeStore } from '../../src/stores/typeorm.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

beforeAll(async () => {
  await buildPackage();
});

for (const database of ['postgres', 'mysql'] as const) {
  describe.skipIf(process.env.CI_REPEAT_RUN === '1')(`TypeORM on ${database}`, () => {
    const { run } = testRun();
    const table = `mw_inbox_${run}`;
    const effectsTable = `mw_effects_${run}`;
    const url = database === 'postgres' ? DATABASE_URL : MYSQL_URL;
    const dataSource = new DataSource({ type: database, url, poolSize: 2 });

    beforeAll(async () => {
      await dataSource.initialize();
      await new TypeOrmDedupeStore({ dataSource, table }).migrate();
      // No unique constraint on purpose: a second write of an event must show, not be rejected.
      await dataSource.query(`CREATE TABLE ${effectsTable} (event_id varchar(200) NOT NULL)`);
    });

    afterAll(async () => {
      for (const name of [table, effectsTable]) await dataSource.query(`DROP TABLE IF EXISTS ${name}`);
      await dataSource.destroy();
    });

    it('300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once', async () => {
      const counts = await expectEachRowOnce({
        store: `typeorm-${database}`,
        url,
        table,
        effectsTable,
        run,
        rows: async () => {
          const rows: Array<{ event_id: string; n: number | string }> = await dataSource.query(
            `SELECT event_id, COUNT(*) AS n FROM ${effectsTable} GROUP BY event_id`,
          );
          return new Map(rows.map((row) => [row.event_id, Number(row.n)]));
        },
      });
      console.info(`TypeORM on ${database}`, counts);
    }, 90_000);
  });
}
