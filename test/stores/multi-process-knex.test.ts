import knexFactory from 'knex';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { KnexDedupeStore } from '../../src/stores/knex.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const open = (database: string) =>
  database === 'postgres'
    ? knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 2 } })
    : knexFactory({ client: 'mysql2', connection: MYSQL_URL, pool: { min: 0, max: 2 } });

beforeAll(async () => {
  await buildPackage();
});

for (const database of ['postgres', 'mysql']) {
  describe.skipIf(process.env.CI_REPEAT_RUN === '1')(`Knex on ${database}`, () => {
    const { run } = testRun();
    const table = `mw_inbox_${run}`;
    const effectsTable = `mw_effects_${run}`;
    const db = open(database);

    beforeAll(async () => {
      await new KnexDedupeStore({ knex: db, table }).migrate();
      // No unique constraint on purpose: a second write of an event must show, not be rejected.
      await db.schema.createTable(effectsTable, (columns) => {
        columns.string('event_id', 200).notNullable();
      });
    });

    afterAll(async () => {
      await db.schema.dropTableIfExists(table).dropTableIfExists(effectsTable);
      await db.destroy();
    });

    it('300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once', async () => {
      const counts = await expectEachRowOnce({
        store: `knex-${database}`,
        url: database === 'postgres' ? DATABASE_URL : MYSQL_URL,
        table,
        effectsTable,
        run,
        rows: async () => {
          const rows: Array<{ event_id: string; n: number | string }> = await db(effectsTable)
            .select('event_id')
            .count({ n: '*' })
            .groupBy('event_id');
          return new Map(rows.map((row) => [row.event_id, Number(row.n)]));
        },
      });
      console.info(`Knex on ${database}`, counts);
    }, 90_000);
  });
}
