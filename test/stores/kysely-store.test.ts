import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, MysqlDialect, PostgresDialect, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { KyselyDedupeStore, kyselyInboxMigration } from '../../src/stores/kysely.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_kysely_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effects = `${table}_effects`;
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };

/** The app's database as Kysely types it: its own table of effects. */
type AppDB = Record<string, { event_id: string }>;

const databases = {
  postgres: new Kysely<AppDB>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 10 }) }),
  }),
  mysql: new Kysely<AppDB>({
    dialect: new MysqlDialect({ pool: createPool({ uri: MYSQL_URL, connectionLimit: 10 }) }),
  }),
};

afterAll(async () => {
  for (const db of Object.values(databases)) {
    await db.schema.dropTable(table).ifExists().execute();
    await db.schema.dropTable(effects).ifExists().execute();
    await db.destroy();
  }
});

for (const [name, db] of Object.entries(databases)) {
  const store = new KyselyDedupeStore({ db, table });

  beforeAll(async () => {
    // The app's own migrations create the inbox: kyselyInboxMigration() is one of them.
    await kyselyInboxMigration({ table }).up(db);
    await db.schema
      .createTable(effects)
      .addColumn('event_id', 'varchar(200)', (column) => column.notNull())
      .execute();
  });

  describeStoreConformance(`kysely on ${name}`, () => ({ store, ...LEASE }));
  describeTransactionalInbox(`kysely on ${name}`, () => ({
    store,
    write: (tx: Transaction<AppDB>, id: string) => tx.insertInto(effects).values({ event_id: id }).execute(),
    rows: async (id: string) => {
      const row = await db
        .selectFrom(effects)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('event_id', '=', id)
        .executeTakeFirst();
      return Number(row?.n);
    },
  }));

  describe(`KyselyDedupeStore on ${name}`, () => {
    it('names the migration to run when the table is missing', async () => {
      const missing = new KyselyDedupeStore({ db, table: `${table}_missing` });
      await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(
        /does not exist: run `await store\.migrate\(\)`.*kyselyInboxMigration\(\)/,
      );
    });

    it('migrates idempotently, and the migration goes down', async () => {
      const other = `${table}_m`;
      await Promise.all([1, 2, 3].map(() => kyselyInboxMigration({ table: other }).up(db)));
      const claim = await new KyselyDedupeStore({ db, table: other }).claim('live:evt_m', 1000);
      expect(claim.status).toBe('claimed');
      await kyselyInboxMigration({ table: other }).down(db);
      const tables = await db.introspection.getTables();
      expect(tables.map((each) => each.name)).not.toContain(other);
    });

    it('refuses a transaction in place of the instance', async () => {
      await db.transaction().execute(async (trx) => {
        expect(() => new KyselyDedupeStore({ db: trx })).toThrow(/got a Kysely transaction/);
      });
    });
  });
}

describe('KyselyDedupeStore misuse', () => {
  it('says what to pass for something that is not Kysely', () => {
    expect(() => new KyselyDedupeStore({ db: {} as Kysely<AppDB> })).toThrow(WebhookConfigError);
    expect(() => new KyselyDedupeStore({ db: undefined as unknown as Kysely<AppDB> })).toThrow(
      /the app's Kysely instance/,
    );
    expect(() => new KyselyDedupeStore({ db: databases.postgres, table: 'x; DROP' })).toThrow(
      /letters, digits/,
    );
  });
});
