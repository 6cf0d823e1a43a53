import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { count, eq } from 'drizzle-orm';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { type MySql2Database, drizzle as mysqlDrizzle } from 'drizzle-orm/mysql2';
import { type NodePgDatabase, drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { DrizzleDedupeStore } from '../../src/stores/drizzle.js';
import { mysqlWebhookInbox, pgWebhookInbox } from '../../src/stores/drizzle-schema.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_drizzle_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effectsName = `${table}_effects`;
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };

const pgEffects = pgTable(effectsName, { eventId: text('event_id').notNull() });
const mysqlEffects = mysqlTable(effectsName, { eventId: varchar('event_id', { length: 200 }).notNull() });
const pgDb = pgDrizzle(new pg.Pool({ connectionString: DATABASE_URL, max: 10 }));
const mysqlDb = mysqlDrizzle(mysql.createPool({ uri: MYSQL_URL, connectionLimit: 10 }));
const pgStore = new DrizzleDedupeStore({ db: pgDb, table });
const mysqlStore = new DrizzleDedupeStore({ db: mysqlDb, table });

beforeAll(async () => {
  await pgStore.migrate();
  await mysqlStore.migrate();
  await pgDb.$client.query(`CREATE TABLE ${effectsName} (event_id text NOT NULL)`);
  await mysqlDb.$client.query(`CREATE TABLE ${effectsName} (event_id VARCHAR(200) NOT NULL)`);
});

afterAll(async () => {
  await pgDb.$client.query(`DROP TABLE IF EXISTS ${table}, ${effectsName}`);
  await mysqlDb.$client.query(`DROP TABLE IF EXISTS ${table}, ${effectsName}`);
  await pgDb.$client.end();
  await mysqlDb.$client.end();
});

describeStoreConformance('drizzle on postgres', () => ({ store: pgStore, ...LEASE }));
describeStoreConformance('drizzle on mysql', () => ({ store: mysqlStore, ...LEASE }));

type PgTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];
type MysqlTx = Parameters<Parameters<MySql2Database['transaction']>[0]>[0];
describeTransactionalInbox('drizzle on postgres', () => ({
  store: pgStore,
  write: (tx: PgTx, id: string) => tx.insert(pgEffects).values({ eventId: id }),
  rows: async (id: string) =>
    (await pgDb.select({ n: count() }).from(pgEffects).where(eq(pgEffects.eventId, id)))[0]?.n ?? 0,
}));
describeTransactionalInbox('drizzle on mysql', () => ({
  store: mysqlStore,
  write: (tx: MysqlTx, id: string) => tx.insert(mysqlEffects).values({ eventId: id }),
  rows: async (id: string) =>
    (await mysqlDb.select({ n: count() }).from(mysqlEffects).where(eq(mysqlEffects.eventId, id)))[0]?.n ?? 0,
}));

describe('DrizzleDedupeStore', () => {
  it("the schema's table definitions describe the table the store writes, on both databases", async () => {
    const key = `live:evt_schema_${randomUUID()}`;
    expect((await pgStore.claim(key, 60_000)).status).toBe('claimed');
    expect((await mysqlStore.claim(key, 60_000)).status).toBe('claimed');
    const pgInbox = pgWebhookInbox(table);
    const [pgRow] = await pgDb.select().from(pgInbox).where(eq(pgInbox.key, key));
    expect(pgRow).toMatchObject({ key, state: 'processing', token: expect.any(String) });
    expect(pgRow?.expiresAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
    const mysqlInbox = mysqlWebhookInbox(table);
    const [mysqlRow] = await mysqlDb.select().from(mysqlInbox).where(eq(mysqlInbox.key, key));
    expect(mysqlRow).toMatchObject({ state: 'processing', token: expect.any(String) });
    expect(String(mysqlRow?.key)).toBe(key);
  });

  it('names the migration to run when the table is missing', async () => {
    for (const db of [pgDb, mysqlDb]) {
      const missing = new DrizzleDedupeStore({ db, table: `${table}_missing` });
      await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(/does not exist.*drizzle-kit/);
    }
  });

  it('says what to pass for something that is not a Drizzle database, or a transaction', async () => {
    expect(() => new DrizzleDedupeStore({ db: {} as NodePgDatabase })).toThrow(WebhookConfigError);
    expect(() => new DrizzleDedupeStore({ db: undefined as unknown as NodePgDatabase })).toThrow(
      /the app's Drizzle database/,
    );
    await pgDb.transaction(async (tx) => {
      expect(() => new DrizzleDedupeStore({ db: tx })).toThrow(/got a Drizzle transaction/);
    });
    const other = { execute: () => Promise.resolve(), transaction: () => Promise.resolve(), dialect: {} };
    expect(() => new DrizzleDedupeStore({ db: other })).toThrow(/PostgreSQL and MySQL.*pass dialect/);
  });
});
