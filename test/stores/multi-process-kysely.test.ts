import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { KyselyDedupeStore } from '../../src/stores/kysely.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const open = (database: string) =>
  new Kysely<Record<string, { event_id: string }>>({
    dialect:
      database === 'postgres'
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 2 }) })
        : new MysqlDialect({ pool: createPool({ uri: MYSQL_URL, connectionLimit: 2 }) }),
  });

beforeAll(async () => {
  await buildPackage();
});

for (const database of ['postgres', 'mysql']) {
  describe.skipIf(process.env.CI_REPEAT_RUN === '1')(`Kysely on ${database}`, () => {
    const { run } = testRun();
    const table = `mw_inbox_${run}`;
    const effectsTable = `mw_effects_${run}`;
    const db = open(database);

    beforeAll(async () => {
      await new KyselyDedupeStore({ db, table }).migrate();
      // No unique constraint on purpose: a second write of an event must show, not be rejected.
      await db.schema
        .createTable(effectsTable)
        .addColumn('event_id', 'varchar(200)', (column) => column.notNull())
        .execute();
    });

    afterAll(async () => {
      await db.schema.dropTable(table).ifExists().execute();
      await db.schema.dropTable(effectsTable).ifExists().execute();
      await db.destroy();
    });

    it('300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once', async () => {
      const counts = await expectEachRowOnce({
        store: `kysely-${database}`,
        url: database === 'postgres' ? DATABASE_URL : MYSQL_URL,
        table,
        effectsTable,
        run,
        rows: async () => {
          const rows = await db
            .selectFrom(effectsTable)
            .select((eb) => ['event_id', eb.fn.countAll<number>().as('n')])
            .groupBy('event_id')
            .execute();
          return new Map(rows.map((row) => [String(row.event_id), Number(row.n)]));
        },
      });
      console.info(`Kysely on ${database}`, counts);
    }, 90_000);
  });
}
