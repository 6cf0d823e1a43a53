import type { Knex } from 'knex';
import type { Kysely, Transaction } from 'kysely';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { KnexDedupeStore } from '../../src/stores/knex.js';
import { KyselyDedupeStore } from '../../src/stores/kysely.js';

declare const knex: Knex;
interface AppDB {
  messages: { id: string; status: string };
}
declare const db: Kysely<AppDB>;

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
