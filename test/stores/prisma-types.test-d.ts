import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { PrismaDedupeStore } from '../../src/stores/prisma.js';
import type { PrismaClient as MysqlPrisma } from './prisma/generated/mysql/client.js';
import type { Prisma, PrismaClient } from './prisma/generated/postgres/client.js';

declare const prisma: PrismaClient;
declare const mysqlPrisma: MysqlPrisma;

describe('ctx.tx is the Prisma transaction client', () => {
  it("is the generated client's Prisma.TransactionClient, with the app's models", () => {
    const receiver = createReceiver({ secrets: 's', store: new PrismaDedupeStore({ prisma }) });
    receiver.on('message.delivered', async (event, ctx) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Prisma.TransactionClient>();
      await ctx.tx.effect.create({ data: { eventId: event.data.message_id } });
      // @ts-expect-error: no such model in the app's schema
      await ctx.tx.order.update({ where: { id: 1 }, data: {} });
      // @ts-expect-error: no such field of the model
      await ctx.tx.effect.create({ data: { event: 'x' } });
    });
  });

  it('is typed by the client of the MySQL schema on MySQL', () => {
    const receiver = createReceiver({ secrets: 's', store: new PrismaDedupeStore({ prisma: mysqlPrisma }) });
    receiver.on('message.delivered', async (_event, ctx) => {
      expectTypeOf(await ctx.tx.effect.count()).toEqualTypeOf<number>();
      // @ts-expect-error: no such field of the MySQL model
      await ctx.tx.effect.create({ data: { event: 'x' } });
    });
  });

  it('an extended client hands its extensions to ctx.tx', () => {
    const extended = prisma.$extends({ client: { $hello: () => 'hi' as const } });
    const receiver = createReceiver({ secrets: 's', store: new PrismaDedupeStore({ prisma: extended }) });
    receiver.on('message.delivered', async (_event, ctx) => {
      await ctx.tx.effect.count();
    });
  });

  it('accepts only a Prisma client', () => {
    // @ts-expect-error: not a PrismaClient
    new PrismaDedupeStore({ prisma: { $queryRawUnsafe: 1 } });
    // @ts-expect-error: the option is a number of milliseconds
    new PrismaDedupeStore({ prisma, transactionTimeoutMs: '5s' });
  });
});
