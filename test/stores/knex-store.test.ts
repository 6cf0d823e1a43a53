import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { KnexDedupeStore, knexInboxMigration } from '../../src/stores/knex.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_knex_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effects = `${table}_effects`;
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };

const databases = {
  postgres: knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 10 } }),
  mysql: knexFactory({ client: 'mysql2', connection: MYSQL_URL, pool: { min: 0, max: 10 } }),
};

afterAll(async () => {
  for (const knex of Object.values(databases)) {
    await knex.schema.dropTableIfExists(table).dropTableIfExists(effects);
    await knex.destroy();
  }
});

for (const [name, knex] of Object.entries(databases)) {
  const store = new KnexDedupeStore({ knex, table });

  beforeAll(async () => {
    // The app's own migrations create the inbox: knexInboxMigration() is one of them.
    await knexInboxMigration({ table }).up(knex);
    await knex.schema.createTable(effects, (columns) => {
      columns.string('event_id', 200).notNullable();
    });
  });

  describeStoreConformance(`knex on ${name}`, () => ({ store, ...LEASE }));
  describeTransactionalInbox(`knex on ${name}`, () => ({
    store,
    write: (tx: Knex.Transaction, id: string) => tx(effects).insert({ event_id: id }),
    rows: async (id: string) => Number((await knex(effects).where({ event_id: id }).count({ n: '*' }))[0]?.n),
  }));

  describe(`KnexDedupeStore on ${name}`, () => {
    it('names the migration to run when the table is missing', async () => {
      const missing = new KnexDedupeStore({ knex, table: `${table}_missing` });
      await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(
        /does not exist: run `await store\.migrate\(\)`.*knexInboxMigration\(\)/,
      );
    });

    it('migrates idempotently, and the migration goes down', async () => {
      const other = `${table}_m`;
      await Promise.all([1, 2, 3].map(() => knexInboxMigration({ table: other }).up(knex)));
      expect((await new KnexDedupeStore({ knex, table: other }).claim('live:evt_m', 1000)).status).toBe(
        'claimed',
      );
      await knexInboxMigration({ table: other }).down(knex);
      expect(await knex.schema.hasTable(other)).toBe(false);
    });

    it('refuses a transaction in place of the instance', async () => {
      await knex.transaction(async (trx) => {
        expect(() => new KnexDedupeStore({ knex: trx })).toThrow(/got a Knex transaction/);
      });
    });
  });
}

describe('KnexDedupeStore misuse', () => {
  it('says what to pass for something that is not Knex, and names the databases it supports', () => {
    expect(() => new KnexDedupeStore({ knex: {} as Knex })).toThrow(WebhookConfigError);
    expect(() => new KnexDedupeStore({ knex: undefined as unknown as Knex })).toThrow(
      /the app's Knex instance/,
    );
    const redshift = knexFactory({ client: 'redshift', connection: DATABASE_URL });
    expect(() => new KnexDedupeStore({ knex: redshift })).toThrow(
      /PostgreSQL.*MySQL.*got client "pg-redshift"/,
    );
    void redshift.destroy();
    expect(() => new KnexDedupeStore({ knex: databases.postgres, table: 'x; DROP' })).toThrow(
      /letters, digits/,
    );
  });
});
