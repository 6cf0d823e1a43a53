import type { Pool, PoolConnection } from 'mysql2/promise';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { MysqlDedupeStore } from '../../src/stores/mysql.js';

declare const pool: Pool;

describe('ctx.tx follows the MySQL store', () => {
  it('is the transaction connection for a transactional MySQL store', () => {
    const receiver = createReceiver({
      secrets: 's',
      store: new MysqlDedupeStore({ pool, transactional: true }),
    });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<PoolConnection>();
      await ctx.tx.query('UPDATE messages SET status = ? WHERE id = ?', ['delivered', event.data.message_id]);
      // @ts-expect-error: a connection has no such method
      await ctx.tx.update('messages');
    });
  });

  it('is undefined for a plain MySQL store', () => {
    createReceiver({ secrets: 's', store: new MysqlDedupeStore({ pool }) }).onAny((_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<undefined>();
    });
  });

  it('accepts only a mysql2/promise Pool', () => {
    // @ts-expect-error: not a Pool
    new MysqlDedupeStore({ pool: {} });
  });
});
