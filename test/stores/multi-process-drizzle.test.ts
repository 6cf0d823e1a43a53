import { sql } from 'drizzle-orm';
import { drizzle as mysqlDrizzle } from 'drizzle-orm/mysql2';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DrizzleDedupeStore } from '../../src/stores/drizzle.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
/** The test's own Drizzle database, seen through what it needs of it on either driver. */
function open(database: string) {
  const db =
    database === 'postgres'
      ? pgDrizzle(new pg.Pool({ connectionString: DATABASE_URL, max: 2 }))
      : mysqlDrizzle(mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 }));
  return db as unknown as {
    execute(query: ReturnType<typeof sql.raw>): Promise<unknown>;
    transaction(work: (tx: unknown) => Promise<unknown>): Promise<unknown>;
    $client: { end(): Promise<void> };
  };
}

beforeAll(async () => {
  await buildPackage();
});

for (const database of ['postgres', 'mysql']) {
  describe.skipIf(process.env.CI_REPEAT_RUN === '1')(`Drizzle on ${database}`, () => {
    const { run } = testRun();
    const table = `mw_inbox_${run}`;
    const effectsTable = `mw_effects_${run}`;
    const db = open(database);

    beforeAll(async () => {
      await new DrizzleDedupeStore({ db, table }).migrate();
      // No unique constraint on purpose: a second write of an event must show, not be rejected.
      await db.execute(sql.raw(`CREATE TABLE ${effectsTable} (event_id varchar(200) NOT NULL)`));
    });

    afterAll(async () => {
      await db.execute(sql.raw(`DROP TABLE IF EXISTS ${table}, ${effectsTable}`));
      await db.$client.end();
    });

    it('300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once', async () => {
      const counts = await expectEachRowOnce({
        store: `drizzle-${database}`,
        url: database === 'postgres' ? DATABASE_URL : MYSQL_URL,
        table,
        effectsTable,
        run,
        rows: async () => {
          const query = sql.raw(`SELECT event_id, count(*) AS n FROM ${effectsTable} GROUP BY event_id`);
          const result = (await db.execute(query)) as unknown;
          const rows = (Array.isArray(result) ? result[0] : (result as { rows: unknown[] }).rows) as Array<{
            event_id: string;
            n: number | string;
          }>;
          return new Map(rows.map((row) => [row.event_id, Number(row.n)]));
        },
      });
      console.info(`Drizzle on ${database}`, counts);
    }, 90_000);
  });
}
