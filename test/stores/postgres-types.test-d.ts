import type { Pool, PoolClient } from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver, type HandlerContext } from '../../src/index.js';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';

declare const pool: Pool;
declare const redisClient: import('redis').RedisClientType;

describe('ctx.tx follows the store', () => {
  it('is the transaction client for a transactional PostgreSQL store', () => {
    const receiver = createReceiver({
      secrets: 's',
      store: new PostgresDedupeStore({ pool, transactional: true }),
    });
    receiver.on('message.delivered', (_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<PoolClient>();
    });
  });

  it('is undefined for the memory store, a plain PostgreSQL store and the Redis store', () => {
    createReceiver({ secrets: 's' }).on('message.delivered', (_event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<undefined>();
    });
    createReceiver({ secrets: 's', store: new PostgresDedupeStore({ pool }) }).on(
      'message.delivered',
      (_event, ctx) => {
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext<undefined>>();
      },
    );
    createReceiver({ secrets: 's', store: new RedisDedupeStore({ client: redisClient }) }).onAny(
      (_event, ctx) => {
        expectTypeOf(ctx.tx).toEqualTypeOf<undefined>();
      },
    );
  });

  it('accepts only a pg Pool and a node-redis client', () => {
    // @ts-expect-error: not a Pool
    new PostgresDedupeStore({ pool: {} });
    // @ts-expect-error: not a Redis client
    new RedisDedupeStore({ client: { get: () => 1 } });
  });
});
