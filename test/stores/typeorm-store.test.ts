import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager, EntitySchema } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { TypeOrmDedupeStore } from '../../src/stores/typeorm.js';
import { webhookInboxEntity } from '../../src/stores/typeorm-entity.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const table = `mw_typeorm_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };

/** The app's own entity: one row per handler write. */
interface Effect {
  id: number;
  eventId: string;
}
const Effect = new EntitySchema<Effect>({
  name: 'Effect',
  tableName: `${table}_effects`,
  columns: {
    id: { type: Number, primary: true, generated: 'increment' },
    eventId: { name: 'event_id', type: String, length: 200 },
  },
});

const databases = {
  postgres: new DataSource({ type: 'postgres', url: DATABASE_URL, entities: [Effect], poolSize: 10 }),
  mysql: new DataSource({ type: 'mysql', url: MYSQL_URL, entities: [Effect], poolSize: 10 }),
};

afterAll(async () => {
  for (const dataSource of Object.values(databases)) {
    for (const name of [table, `${table}_effects`, `${table}_entity`])
      await dataSource.query(`DROP TABLE IF EXISTS ${name}`);
    await dataSource.destroy();
  }
});

for (const [name, dataSource] of Object.entries(databases)) {
  const store = new TypeOrmDedupeStore({ dataSource, table });

  beforeAll(async () => {
    await dataSource.initialize();
    await dataSource.synchronize();
    await store.migrate();
  });

  describeStoreConformance(`typeorm on ${name}`, () => ({ store, ...LEASE }));
  describeTransactionalInbox(`typeorm on ${name}`, () => ({
    store,
    // The handler's write through the transaction's EntityManager, as an app writes.
    write: (tx: EntityManager, id: string) => tx.getRepository(Effect).insert({ eventId: id }),
    rows: (id: string) => dataSource.getRepository(Effect).countBy({ eventId: id }),
  }));

  describe(`TypeOrmDedupeStore on ${name}`, () => {
    it('names the entity or SQL to apply when the table is missing', async () => {
      const missing = new TypeOrmDedupeStore({ dataSource, table: `${table}_missing` });
      await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(
        /does not exist: run `await store\.migrate\(\)`.*webhookInboxEntity\(\)/,
      );
    });

    it('the entity creates the table the store works on (synchronize, as a generated migration would)', async () => {
      const entityTable = `${table}_entity`;
      const own = new DataSource({
        ...dataSource.options,
        entities: [webhookInboxEntity(name as 'postgres' | 'mysql', entityTable)],
      } as typeof dataSource.options);
      await own.initialize();
      try {
        await own.synchronize();
        const onEntity = new TypeOrmDedupeStore({ dataSource: own, table: entityTable });
        const claim = await onEntity.claim('live:evt_entity', 5000);
        expect(claim.status).toBe('claimed');
        const token = (claim as { token: string }).token;
        expect(await onEntity.complete('live:evt_entity', token, 60_000)).toBe(true);
        expect(await onEntity.claim('live:evt_entity', 5000)).toEqual({ status: 'duplicate' });
      } finally {
        await own.destroy();
      }
    });

    it('refuses an EntityManager in place of the DataSource', async () => {
      await dataSource.transaction(async (manager) => {
        expect(() => new TypeOrmDedupeStore({ dataSource: manager as unknown as DataSource })).toThrow(
          /got an EntityManager/,
        );
      });
    });
  });
}

describe('TypeOrmDedupeStore named statements on PostgreSQL', () => {
  it('a connection that lost them (a pooler between) fails one event, then the store sends them unnamed', async () => {
    // One connection, so that the statements dropped are those the store's client believes prepared.
    const own = new DataSource({
      ...databases.postgres.options,
      poolSize: 1,
    } as typeof databases.postgres.options);
    await own.initialize();
    const deliver = async (store: TypeOrmDedupeStore, key: string) => {
      const open = await store.claimInTransaction?.(key, 5000);
      if (open?.status !== 'claimed') throw new Error(`expected a claim, got ${open?.status}`);
      await open.run(60_000, async () => undefined);
    };
    try {
      const store = new TypeOrmDedupeStore({ dataSource: own, table });
      await deliver(store, 'live:evt_named_1');
      await own.query('DEALLOCATE ALL');
      await expect(deliver(store, 'live:evt_named_2')).rejects.toMatchObject({ code: '26000' });
      await deliver(store, 'live:evt_named_2');
      await own.query('DEALLOCATE ALL');
      await deliver(store, 'live:evt_named_3');
      expect(await store.claim('live:evt_named_3', 5000)).toEqual({ status: 'duplicate' });
    } finally {
      await own.destroy();
    }
  });
});

describe('TypeOrmDedupeStore misuse', () => {
  it('says what to pass for something that is not a DataSource, and names the databases it supports', () => {
    expect(() => new TypeOrmDedupeStore({ dataSource: {} as DataSource })).toThrow(WebhookConfigError);
    expect(() => new TypeOrmDedupeStore({ dataSource: undefined as unknown as DataSource })).toThrow(
      /the app's TypeORM DataSource/,
    );
    const method = () => undefined;
    const sqlite = { transaction: method, createQueryRunner: method, options: { type: 'better-sqlite3' } };
    expect(() => new TypeOrmDedupeStore({ dataSource: sqlite as unknown as DataSource })).toThrow(
      /PostgreSQL.*MySQL.*got type "better-sqlite3"/,
    );
    expect(() => new TypeOrmDedupeStore({ dataSource: databases.postgres, table: 'x; DROP' })).toThrow(
      /letters, digits/,
    );
  });
});
