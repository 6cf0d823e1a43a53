import { eq } from 'drizzle-orm';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import type { MySql2Database } from 'drizzle-orm/mysql2';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import type { Knex } from 'knex';
import type { Transaction } from 'kysely';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { DrizzleDedupeStore } from '../../src/stores/drizzle.js';
import { KnexDedupeStore } from '../../src/stores/knex.js';
import { KyselyDedupeStore } from '../../src/stores/kysely.js';
import { type AppDB, db, knex } from '../support/orm-type-shapes.js';

declare const pgDb: NodePgDatabase;
declare const mysqlDb: MySql2Database;
type PgTransactionOf<D extends NodePgDatabase> = Parameters<Parameters<D['transaction']>[0]>[0];

describe('ctx.tx is the ORM transaction', () => {
  it('is a Knex.Transaction for the Knex store', () => {
    const receiver = createReceiver({ secrets: 's', store: new KnexDedupeStore({ knex }) });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Knex.Transaction>();
      await ctx.tx('messages').where({ id: event.data.message_id }).update({ status: 'delivered' });
      // @ts-expect-error: a Knex transaction has no such method
      await ctx.tx.updateMany('messages');
    });
  });

  it("is Kysely's Transaction of the app's database for the Kysely store", () => {
    const receiver = createReceiver({ secrets: 's', store: new KyselyDedupeStore({ db }) });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Transaction<AppDB>>();
      await ctx.tx
        .updateTable('messages')
        .set({ status: 'delivered' })
        .where('id', '=', event.data.message_id)
        .execute();
      // @ts-expect-error: no such table in the app's database
      await ctx.tx.updateTable('orders').set({ status: 'x' }).execute();
      // @ts-expect-error: no such column
      await ctx.tx.updateTable('messages').set({ state: 'x' }).execute();
    });
  });

  it('accepts only the ORM client', () => {
    // @ts-expect-error: not a Knex instance
    new KnexDedupeStore({ knex: { raw: 1 } });
    // @ts-expect-error: not a Kysely instance
    new KyselyDedupeStore({ db: { selectFrom: 1 } });
  });
});

describe('ctx.tx is the Drizzle transaction', () => {
  it("is the tx of the app's Drizzle database, on PostgreSQL and on MySQL", () => {
    const pgMessages = pgTable('messages', { id: text('id').primaryKey(), status: text('status').notNull() });
    const pgReceiver = createReceiver({ secrets: 's', store: new DrizzleDedupeStore({ db: pgDb }) });
    pgReceiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<PgTransactionOf<typeof pgDb>>();
      await ctx.tx
        .update(pgMessages)
        .set({ status: 'delivered' })
        .where(eq(pgMessages.id, event.data.message_id));
      // @ts-expect-error: no such column
      await ctx.tx.update(pgMessages).set({ state: 'delivered' });
    });
    const mysqlMessages = mysqlTable('messages', { id: varchar('id', { length: 64 }).primaryKey() });
    const mysqlReceiver = createReceiver({ secrets: 's', store: new DrizzleDedupeStore({ db: mysqlDb }) });
    mysqlReceiver.on('message.delivered', async (event, ctx) => {
      await ctx.tx
        .insert(mysqlMessages)
        .values({ id: event.data.message_id })
        .onDuplicateKeyUpdate({ set: {} });
      // @ts-expect-error: PostgreSQL's onConflictDoNothing is not MySQL's
      await ctx.tx.insert(mysqlMessages).values({ id: 'x' }).onConflictDoNothing();
    });
  });

  it('accepts only a Drizzle database', () => {
    // @ts-expect-error: not a Drizzle database
    new DrizzleDedupeStore({ db: { execute: 1 } });
  });
});
