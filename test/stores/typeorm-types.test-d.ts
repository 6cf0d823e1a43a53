import type { DataSource, EntityManager } from 'typeorm';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { TypeOrmDedupeStore } from '../../src/stores/typeorm.js';

declare const dataSource: DataSource;

describe('ctx.tx is the TypeORM EntityManager', () => {
  it("is the transaction's EntityManager for the TypeORM store", () => {
    const receiver = createReceiver({ secrets: 's', store: new TypeOrmDedupeStore({ dataSource }) });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<EntityManager>();
      await ctx.tx.update('messages', { id: event.data.message_id }, { status: 'delivered' });
      // @ts-expect-error: an EntityManager has no such method
      await ctx.tx.updateMany('messages');
    });
  });

  it('accepts only a DataSource', () => {
    // @ts-expect-error: not a DataSource
    new TypeOrmDedupeStore({ dataSource: { query: 1 } });
  });
});
