import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import mysqlCallbacks from 'mysql2';
import mysql, { type PoolConnection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { MysqlDedupeStore } from '../../src/stores/mysql.js';
import { shippedStatements } from '../support/shipped-sql.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_inbox_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effects = `${table}_effects`;
const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 10, connectTimeout: 2000 });
const store = new MysqlDedupeStore({ pool, table });
const transactional = new MysqlDedupeStore({ pool, table, transactional: true });

beforeAll(async () => {
  await store.migrate();
  await pool.query(`CREATE TABLE ${effects} (event_id VARCHAR(200) NOT NULL) ENGINE=InnoDB`);
});

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS \`${table}\`, ${effects}`);
  await pool.end();
});

// Leases end on the database's clock, which no test can move: `advance` really waits.
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };
describeStoreConformance('mysql', () => ({ store, ...LEASE }));
describeStoreConformance('mysql transactional', () => ({ store: transactional, ...LEASE }));

const rows = async (eventId: string) => {
  const [result] = await pool.query(`SELECT count(*) AS n FROM ${effects} WHERE event_id = ?`, [eventId]);
  return Number((result as Array<{ n: number }>)[0]?.n);
};
describeTransactionalInbox('mysql', () => ({
  store: transactional,
  write: (tx: PoolConnection, id: string) => tx.query(`INSERT INTO ${effects} (event_id) VALUES (?)`, [id]),
  rows,
}));

async function claimToken(key: string, leaseMs = 5000): Promise<string> {
  const claim = await store.claim(key, leaseMs);
  expect(claim.status).toBe('claimed');
  return (claim as { token: string }).token;
}

describe('MysqlDedupeStore', () => {
  it('ships sql/webhook_inbox.mysql.sql equal to what migrate() runs for the default table', async () => {
    const statements = await shippedStatements('webhook_inbox.mysql.sql');
    expect(statements).toBe(new MysqlDedupeStore({ pool }).createTableSql);
  });

  it('migrates idempotently, also from several instances at once', async () => {
    const concurrent = `${table}_m`;
    const stores = [1, 2, 3].map(() => new MysqlDedupeStore({ pool, table: concurrent }));
    try {
      await Promise.all(stores.map((each) => each.migrate()));
      expect((await stores[0]?.claim('live:evt_m', 1000))?.status).toBe('claimed');
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${concurrent}\``);
    }
  });

  it('names the migration to run when the table is missing', async () => {
    const missing = new MysqlDedupeStore({ pool, table: `${table}_missing`, transactional: true });
    await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(
      /does not exist: run `await store\.migrate\(\)`.*sql\/webhook_inbox\.mysql\.sql/,
    );
  });

  it('tells a pool of the wrong kind apart, saying what to pass', () => {
    const wrong = (value: unknown) => () => new MysqlDedupeStore({ pool: value as mysql.Pool });
    expect(wrong(undefined)).toThrow(WebhookConfigError);
    expect(wrong({})).toThrow(/a Pool from `mysql2\/promise`.*got/);
    const callbacks = mysqlCallbacks.createPool({ uri: MYSQL_URL });
    expect(wrong(callbacks)).toThrow(/callback API's pool.*pool\.promise\(\)/);
    callbacks.end();
    const pgPool = new pg.Pool();
    expect(wrong(pgPool)).toThrow(/got a pg Pool/);
    void pgPool.end();
    expect(() => new MysqlDedupeStore({ pool, table: 'inbox`; DROP TABLE x' })).toThrow(/letters, digits/);
  });

  it('keeps keys that differ only in case, and keys longer than the column, apart', async () => {
    const base = `live:evt_case_${randomUUID()}`;
    await claimToken(`${base}_A`);
    await claimToken(`${base}_a`);
    const long = `${base}_${'x'.repeat(400)}`;
    await claimToken(`${long}1`);
    await claimToken(`${long}2`);
    expect((await store.claim(`${long}1`, 1000)).status).toBe('in_flight');
  });

  it('measures leases by the database clock, in UTC whatever the session time zone', async () => {
    const connection = await pool.getConnection();
    await connection.query("SET time_zone = '+09:00'");
    connection.release();
    await claimToken('live:evt_clock', 60_000);
    const [result] = await pool.query(
      `SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) / 1000 AS left_ms FROM \`${table}\` WHERE \`key\` = ?`,
      ['live:evt_clock'],
    );
    const left = Number((result as Array<{ left_ms: string }>)[0]?.left_ms);
    expect(left).toBeGreaterThan(59_000);
    expect(left).toBeLessThanOrEqual(60_000);
  });

  it('purges rows that expired over an hour ago, and only those', async () => {
    const old = `live:evt_old_${randomUUID()}`;
    const fresh = `live:evt_fresh_${randomUUID()}`;
    await claimToken(old);
    await claimToken(fresh);
    await pool.query(
      `UPDATE \`${table}\` SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 2 HOUR WHERE \`key\` = ?`,
      [old],
    );
    expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect((await store.claim(fresh, 1000)).status).toBe('in_flight');
    expect((await store.claim(old, 1000)).status).toBe('claimed');
  });

  it('returns its connection to the pool whatever the handlers do', async () => {
    const token = await claimToken('live:evt_tx_pool');
    for (let i = 0; i < 15; i++) {
      await transactional
        .transact?.('live:evt_tx_pool', token, 60_000, async () => {
          throw new Error('again');
        })
        .catch(() => {});
    }
    const inner = pool.pool as unknown as {
      _allConnections: { length: number };
      _freeConnections: { length: number };
    };
    expect(inner._allConnections.length).toBeLessThanOrEqual(10);
    expect(inner._freeConnections.length).toBe(inner._allConnections.length);
  });

  it('on MySQL, which has no SET STATEMENT, claims before the transaction from then on', async () => {
    const onMysql = new MysqlDedupeStore({ pool: withoutSetStatement(pool), table, transactional: true });
    const id = `evt_no_set_${randomUUID()}`;
    const opened = await onMysql.claimInTransaction?.(`live:${id}`, 5000);
    if (opened?.status !== 'claimed') throw new Error(`expected a claim, got ${opened?.status}`);
    expect(onMysql.claimInTransaction).toBeUndefined();
    await opened.run(60_000, (tx) => tx.query(`INSERT INTO ${effects} (event_id) VALUES (?)`, [id]));
    expect(await rows(id)).toBe(1);
    expect(await onMysql.claim(`live:${id}`, 1000)).toEqual({ status: 'duplicate' });
  });

  it('fails within its deadline when the database is unreachable', async () => {
    const down = mysql.createPool({ uri: 'mysql://root@127.0.0.1:1/test', connectTimeout: 500 });
    const started = Date.now();
    await expect(new MysqlDedupeStore({ pool: down }).claim('live:evt_down', 1000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3500);
    await down.end();
  });
});

/** The pool as MySQL (not MariaDB) answers it: `SET STATEMENT … FOR` is a syntax error there. */
function withoutSetStatement(real: mysql.Pool): mysql.Pool {
  const parseError = () =>
    Object.assign(new Error('You have an error in your SQL syntax'), { code: 'ER_PARSE_ERROR', errno: 1064 });
  type Done = (error: unknown, result?: unknown) => void;
  type Callbacks = { query(text: string, values: unknown[] | undefined, done: Done): unknown };
  // The callback connection under the promise one, which the store's own statements go through.
  const callbacks = (core: Callbacks) =>
    new Proxy(core, {
      get(target, name) {
        if (name === 'query')
          return (text: string, values: unknown[] | undefined, done: Done) =>
            /^SET STATEMENT/.test(text) ? done(parseError()) : target.query(text, values, done);
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const connection = (inner: PoolConnection) =>
    new Proxy(inner, {
      get(target, name) {
        if (name === 'query')
          return (text: string, values?: Parameters<PoolConnection['query']>[1]) =>
            /^SET STATEMENT/.test(text) ? Promise.reject(parseError()) : target.query(text, values);
        if (name === 'connection') return callbacks(target.connection as unknown as Callbacks);
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return {
    query: (text: string, values?: Parameters<PoolConnection['query']>[1]) => real.query(text, values),
    getConnection: async () => connection(await real.getConnection()),
  } as unknown as mysql.Pool;
}
