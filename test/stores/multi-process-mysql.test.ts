import mysql from 'mysql2/promise';
import { afterAll, beforeAll, it } from 'vitest';
import { MysqlDedupeStore } from '../../src/stores/mysql.js';
import { buildPackage } from '../support/harness/build.js';
import { testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const { run } = testRun();
const table = `mw_inbox_${run}`;
const effectsTable = `mw_effects_${run}`;
const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });

beforeAll(async () => {
  await buildPackage();
  await new MysqlDedupeStore({ pool, table }).migrate();
  // No unique constraint on purpose: a second write of an event must show, not be rejected.
  await pool.query(`CREATE TABLE ${effectsTable} (event_id VARCHAR(200) NOT NULL)`);
});

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS ${table}, ${effectsTable}`);
  await pool.end();
});

it.skipIf(process.env.CI_REPEAT_RUN === '1')(
  'MySQL transactional: 300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once',
  async () => {
    const counts = await expectEachRowOnce({
      store: 'mysql',
      url: MYSQL_URL,
      table,
      effectsTable,
      run,
      rows: async () => {
        const [rows] = await pool.query(
          `SELECT event_id, count(*) AS n FROM ${effectsTable} GROUP BY event_id`,
        );
        return new Map(
          (rows as Array<{ event_id: string; n: number }>).map((row) => [row.event_id, Number(row.n)]),
        );
      },
    });
    console.info('MySQL', counts);
  },
  90_000,
);
