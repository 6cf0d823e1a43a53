import type { Knex } from 'knex';
import type { Transaction } from 'kysely';
import type { DataSource, EntityManager } from 'typeorm';
import { describe, expectTypeOf, it } from 'vitest';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createPgBossWorker, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import { createReceiver } from '../../src/index.js';
import { KnexDedupeStore } from '../../src/stores/knex.js';
import { KyselyDedupeStore } from '../../src/stores/kysely.js';
import { PrismaDedupeStore } from '../../src/stores/prisma.js';
import { TypeOrmDedupeStore } from '../../src/stores/typeorm.js';
import type { PrismaClient } from '../stores/prisma/generated/postgres/client.js';
import { type AppDB, db, knex } from '../support/orm-type-shapes.js';

declare const dataSource: DataSource;
declare const prisma: PrismaClient;
const queue = pgBossQueue({ connectionString: 'postgres://localhost/app' });
const bull = bullmqQueue({ connection: {} as Parameters<typeof bullmqQueue>[0]['connection'] });
type PrismaTx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/*
 * A worker runs the receiver's handlers in its store's transaction: the receiver created with the same store
 * types their ctx.tx as that transaction, and a worker whose store's transaction is not the handlers' ctx.tx
 * does not compile.
 */
describe("a worker's handlers get its store's transaction as ctx.tx", () => {
  it('is the TypeORM EntityManager under BullMQ', () => {
    const store = new TypeOrmDedupeStore({ dataSource });
    const receiver = createReceiver({ secrets: 's', queue: bull, store });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<EntityManager>();
      await ctx.tx.query('UPDATE messages SET status = $1 WHERE id = $2', [
        'delivered',
        event.data.message_id,
      ]);
      // @ts-expect-error: an EntityManager has no such method
      await ctx.tx.updateMany('messages');
    });
    void createBullmqWorker({ receiver, queue: bull, store });
  });

  it("is Prisma's transaction client under pg-boss", () => {
    const store = new PrismaDedupeStore({ prisma });
    const receiver = createReceiver({ secrets: 's', queue, store });
    receiver.on('message.delivered', async (_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<PrismaTx>();
      // @ts-expect-error: a transaction client has no $disconnect
      await ctx.tx.$disconnect();
    });
    void createPgBossWorker({ receiver, queue, store });
  });

  it('is the Knex transaction and the Kysely Transaction<DB>', () => {
    const knexStore = new KnexDedupeStore({ knex });
    const onKnex = createReceiver({ secrets: 's', queue, store: knexStore });
    onKnex.onAny(async (_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Knex.Transaction>();
      // @ts-expect-error: a Knex transaction has no such field
      ctx.tx.notAField;
    });
    void createPgBossWorker({ receiver: onKnex, queue, store: knexStore });
    const kyselyStore = new KyselyDedupeStore({ db });
    const onKysely = createReceiver({ secrets: 's', queue: bull, store: kyselyStore });
    onKysely.on('message.delivered', async (_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Transaction<AppDB>>();
      // @ts-expect-error: no such table in the app's database
      await ctx.tx.selectFrom('orders').selectAll().execute();
    });
    void createBullmqWorker({ receiver: onKysely, queue: bull, store: kyselyStore });
  });

  it("refuses a worker whose store's transaction is not the handlers' ctx.tx", () => {
    const typeorm = new TypeOrmDedupeStore({ dataSource });
    const untyped = createReceiver({ secrets: 's', queue: bull });
    // @ts-expect-error: the handlers were written for ctx.tx undefined, the store hands them an EntityManager
    void createBullmqWorker({ receiver: untyped, queue: bull, store: typeorm });
    const onKysely = createReceiver({ secrets: 's', queue, store: new KyselyDedupeStore({ db }) });
    // @ts-expect-error: the handlers were written for a Kysely transaction, the store hands them an EntityManager
    void createPgBossWorker({ receiver: onKysely, queue, store: typeorm });
    // Without a store, the handlers get no transaction.
    void createBullmqWorker({ receiver: untyped, queue: bull });
  });
});
