import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { shippedStatements } from '../support/shipped-sql.js';
import { until } from '../support/until.js';
import { describeStoreConformance } from './store-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const table = `mw_inbox_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effects = `${table}_effects`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, connectionTimeoutMillis: 2000 });
pool.on('error', () => {});
const store = new PostgresDedupeStore({ pool, table });
const transactional = new PostgresDedupeStore({ pool, table, transactional: true });

beforeAll(async () => {
  await store.migrate();
  await pool.query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);
});

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}", ${effects}`);
  await pool.end();
});

// A lease long enough that two round trips fit in it on a loaded machine: the cases check what happens inside
// a lease and after it, and a claim that outlived its lease between two statements would test neither. Leases
// end on PostgreSQL's clock, which no test can move: `advance` really waits, the lease left to expire is the case.
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };
describeStoreConformance('postgres', () => ({ store, ...LEASE }));
describeStoreConformance('postgres transactional', () => ({ store: transactional, ...LEASE }));

async function claimToken(key: string, leaseMs = 5000): Promise<string> {
  const claim = await store.claim(key, leaseMs);
  expect(claim.status).toBe('claimed');
  return (claim as { token: string }).token;
}

const effectCount = async (eventId: string) =>
  Number((await pool.query(`SELECT count(*) FROM ${effects} WHERE event_id = $1`, [eventId])).rows[0].count);

describe('PostgresDedupeStore', () => {
  it('ships sql/webhook_inbox.sql equal to what migrate() runs for the default table', async () => {
    const statements = await shippedStatements('webhook_inbox.sql');
    expect(statements).toBe(new PostgresDedupeStore({ pool }).createTableSql);
  });

  it('migrates idempotently, also from several instances at once', async () => {
    await Promise.all([store.migrate(), store.migrate(), store.migrate()]);
    const concurrent = `${table}_m`;
    const stores = [1, 2, 3].map(() => new PostgresDedupeStore({ pool, table: concurrent }));
    try {
      await Promise.all(stores.map((each) => each.migrate()));
      expect((await stores[0]?.claim('live:evt_m', 1000))?.status).toBe('claimed');
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${concurrent}"`);
    }
  });

  it('rejects table and schema names that are not plain identifiers', () => {
    expect(() => new PostgresDedupeStore({ pool, table: 'inbox; DROP TABLE users' })).toThrow(
      /letters, digits/,
    );
    expect(() => new PostgresDedupeStore({ pool, table: 'inbox"' })).toThrow(/letters, digits/);
    expect(() => new PostgresDedupeStore({ pool, schema: 'public.x' })).toThrow(/schema/);
    expect(() => new PostgresDedupeStore({ pool, table: '9lives' })).toThrow(/table/);
  });

  it('works in a schema', async () => {
    const schema = `${table}_s`;
    await pool.query(`CREATE SCHEMA "${schema}"`);
    try {
      const scoped = new PostgresDedupeStore({ pool, schema, table: 'inbox' });
      await scoped.migrate();
      const claim = await scoped.claim('live:evt_schema', 1000);
      expect(claim.status).toBe('claimed');
      const rows = await pool.query(`SELECT state FROM "${schema}".inbox`);
      expect(rows.rows).toEqual([{ state: 'processing' }]);
    } finally {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('says to run migrate() when the table is missing', async () => {
    const missing = new PostgresDedupeStore({ pool, table: `${table}_missing` });
    await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(/migrate\(\)/);
  });

  it('measures leases by the database clock', async () => {
    await claimToken('live:evt_clock', 60_000);
    const { rows } = await pool.query(
      `SELECT extract(epoch FROM expires_at - now()) * 1000 AS left_ms FROM "${table}" WHERE key = $1`,
      ['live:evt_clock'],
    );
    expect(Number(rows[0].left_ms)).toBeGreaterThan(59_000);
    expect(Number(rows[0].left_ms)).toBeLessThanOrEqual(60_000);
  });

  it('purges rows that expired over an hour ago, and only those', async () => {
    await claimToken('live:evt_old');
    await claimToken('live:evt_fresh');
    await pool.query(`UPDATE "${table}" SET expires_at = now() - interval '2 hours' WHERE key = $1`, [
      'live:evt_old',
    ]);
    expect(await store.purgeExpired()).toBe(1);
    expect((await store.claim('live:evt_fresh', 1000)).status).toBe('in_flight');
    expect((await store.claim('live:evt_old', 1000)).status).toBe('claimed');
  });

  it('fails fast when the database is unreachable', async () => {
    const down = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/test',
      connectionTimeoutMillis: 500,
    });
    down.on('error', () => {});
    const started = Date.now();
    await expect(new PostgresDedupeStore({ pool: down }).claim('live:evt_down', 1000)).rejects.toThrow();
    // A refused connection fails at once, long before the 3 s operation deadline.
    expect(Date.now() - started).toBeLessThan(2500);
    await down.end();
  });
});

describe('PostgresDedupeStore transactional mode', () => {
  it('has transact only when transactional', () => {
    expect(store.transact).toBeUndefined();
    expect(typeof transactional.transact).toBe('function');
  });

  it('commits the work and the completion together', async () => {
    const token = await claimToken('live:evt_tx_ok');
    const result = await transactional.transact?.('live:evt_tx_ok', token, 60_000, async (tx) => {
      await tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, ['evt_tx_ok']);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await effectCount('evt_tx_ok')).toBe(1);
    expect(await store.claim('live:evt_tx_ok', 1000)).toEqual({ status: 'duplicate' });
  });

  it('commits the work of an event whose id holds a NUL, and answers it duplicate after', async () => {
    const key = `live:evt_tx_nul_${randomUUID()}\u0000`;
    const token = await claimToken(key);
    const result = await transactional.transact?.(key, token, 60_000, async () => 'done');
    expect(result).toBe('done');
    expect(await transactional.claim(key, 1000)).toEqual({ status: 'duplicate' });
  });

  it('rolls the work back when it throws, and leaves the claim to be released', async () => {
    const token = await claimToken('live:evt_tx_fail');
    const failure = new Error('handler failed');
    await expect(
      transactional.transact?.('live:evt_tx_fail', token, 60_000, async (tx) => {
        await tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, ['evt_tx_fail']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await effectCount('evt_tx_fail')).toBe(0);
    expect(await store.release('live:evt_tx_fail', token)).toBe(true);
  });

  it('rolls the work back when the claim was taken over while it ran', async () => {
    const key = 'live:evt_tx_late';
    const stale = await claimToken(key, 100);
    let current: string | undefined;
    await expect(
      transactional.transact?.(key, stale, 60_000, async (tx) => {
        await tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, ['evt_tx_late']);
        // The handler outlives its 100 ms lease, which PostgreSQL's clock ends: another delivery's claim takes
        // the event over while the handler still runs.
        await until(
          async () => {
            const claim = await store.claim(key, 5000);
            if (claim.status === 'claimed') current = claim.token;
            return current !== undefined;
          },
          { what: 'a second claim to take the expired lease over' },
        );
      }),
    ).rejects.toThrow(/taken over/);
    expect(await effectCount('evt_tx_late')).toBe(0);
    expect(await store.complete(key, current as string, 60_000)).toBe(true);
  });

  it('returns its connection to the pool whatever happens', async () => {
    const token = await claimToken('live:evt_tx_pool');
    for (let i = 0; i < 15; i++) {
      await transactional
        .transact?.('live:evt_tx_pool', token, 60_000, async () => {
          throw new Error('again');
        })
        .catch(() => {});
    }
    expect(pool.totalCount).toBeLessThanOrEqual(10);
    expect(pool.idleCount).toBe(pool.totalCount);
  });
});
