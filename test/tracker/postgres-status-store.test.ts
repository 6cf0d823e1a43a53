import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStatusStore } from '../../src/tracker/postgres-store.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { shippedStatements } from '../support/shipped-sql.js';
import { until } from '../support/until.js';
import { describeStatusStoreConformance } from './status-store-conformance.js';

const table = `mw_status_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const pools = [0, 1].map(() => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 5, connectionTimeoutMillis: 2000 });
  pool.on('error', () => {});
  return pool;
});
const stores = pools.map((pool) => new PostgresStatusStore({ pool, table })) as [
  PostgresStatusStore,
  PostgresStatusStore,
];

beforeAll(async () => {
  await Promise.all(stores.map((store) => store.migrate()));
});

afterAll(async () => {
  await pools[0]?.query(`DROP TABLE IF EXISTS "${table}"`);
  await Promise.all(pools.map((pool) => pool.end()));
});

const shortLived = new PostgresStatusStore({ pool: pools[0] as pg.Pool, table, retentionMs: 300 });
describeStatusStoreConformance('postgres', () => ({ stores, shortLived, retentionMs: 300 }));

describe('PostgresStatusStore', () => {
  it('ships sql/message_status.sql equal to what migrate() runs for the default table', async () => {
    const statements = await shippedStatements('message_status.sql');
    expect(statements.trim()).toBe(
      new PostgresStatusStore({ pool: pools[0] as pg.Pool }).createTableSql.trim(),
    );
  });

  it('purges final messages past retention', async () => {
    const id = `msg_purged_${table}`;
    await shortLived.write({ messageId: id, status: 'failed', expectedAt: 1, history: [], version: 1 }, 0);
    const kept = async () => {
      const sql = `SELECT 1 FROM "${table}" WHERE message_id = $1`;
      return (await (pools[0] as pg.Pool).query(sql, [id])).rowCount;
    };
    expect(await kept()).toBe(1);
    await until(async () => (await shortLived.purgeExpired()) >= 0 && (await kept()) === 0);
  });

  it('refuses a table name that is no identifier', () => {
    expect(() => new PostgresStatusStore({ pool: pools[0] as pg.Pool, table: 'x; drop' })).toThrow(
      'table must be letters',
    );
  });
});
