import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { createNodeRedisClient } from 'bullmq';
import knexFactory from 'knex';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import { createClient } from 'redis';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createPgBossWorker, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import { createReceiver } from '../../src/index.js';
import { KnexDedupeStore } from '../../src/stores/knex.js';
import { KyselyDedupeStore } from '../../src/stores/kysely.js';
import { PrismaDedupeStore } from '../../src/stores/prisma.js';
import { TypeOrmDedupeStore } from '../../src/stores/typeorm.js';
import type { DedupeStore } from '../../src/stores/types.js';
import { PrismaClient } from '../stores/prisma/generated/postgres/client.js';
import { DATABASE_URL, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

/*
 * The durable workers run the handlers in an ORM store's inbox: ctx.tx in the worker is the ORM's transaction,
 * the first attempt's write rolls back with its failure, the retry's commits with the "processed" mark.
 * pg-boss with Knex and with Prisma on PostgreSQL, BullMQ with Kysely and with TypeORM on MariaDB.
 */
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const { run } = testRun();
const inbox = `mw_inbox_${run}`;
const effects = `mw_effects_${run}`;
const knex = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 6 } });
type AppDB = Record<string, { event_id: string }>;
const kysely = new Kysely<AppDB>({
  dialect: new MysqlDialect({ pool: createPool({ uri: MYSQL_URL, connectionLimit: 6 }) }),
});
const redis = createClient({ url: REDIS_URL });
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 4 }) });
const typeorm = new DataSource({ type: 'mysql', url: MYSQL_URL, poolSize: 4 });

beforeAll(async () => {
  await redis.connect();
  await typeorm.initialize();
  await knex.schema.createTable(effects, (table) => table.string('event_id').notNullable());
  await kysely.schema.createTable(effects).addColumn('event_id', 'varchar(200)').execute();
});

afterAll(async () => {
  await knex.schema.dropTableIfExists(inbox).dropTableIfExists(effects);
  await knex.raw(`DROP SCHEMA IF EXISTS mw_boss_${run} CASCADE`);
  await knex.destroy();
  await kysely.schema.dropTable(inbox).ifExists().execute();
  await kysely.schema.dropTable(effects).ifExists().execute();
  await kysely.destroy();
  await prisma.$executeRawUnsafe(`DROP TABLE IF EXISTS ${inbox}_prisma`);
  await prisma.$disconnect();
  await typeorm.query(`DROP TABLE IF EXISTS ${inbox}_typeorm`);
  await typeorm.destroy();
  await deleteKeys(redis, `mw-test:${run}:*`);
  redis.destroy();
});

/**
 * A receiver handing events to `queue`, and one whose handler writes through ctx.tx and fails its first try:
 * created with the worker's store, so its handlers' ctx.tx is the store's transaction, as the worker requires.
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
function receivers<S extends DedupeStore<any>>(
  queue: Parameters<typeof createReceiver>[0]['queue'],
  store: S,
) {
  const front = createReceiver({ secrets: SECRET, queue });
  const back = createReceiver({ secrets: SECRET, queue, store });
  back.onError(() => {});
  return { front, back };
}

interface Run {
  front: ReturnType<typeof createReceiver>;
  // biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
  store: DedupeStore<any>;
  worker: { close(options: { timeoutMs: number }): Promise<unknown> };
  queue: { close(): Promise<unknown> };
  seen: boolean[];
}

/**
 * One event handed off: the worker's first try writes and fails, its retry commits with the mark; each try's
 * ctx.tx was a transaction (`seen`), and `rows` finds the event's one effect row.
 */
async function retriedOnce(run: Run, rows: (eventId: string) => Promise<unknown[]>): Promise<void> {
  const { front, store, worker, queue, seen } = run;
  try {
    const event = deliveredEvent({}, { id: `evt_${randomUUID()}` });
    expect((await front.receive(delivery(event))).status).toBe(202);
    await until(async () => (await store.claim(`live:${event.id}`, 1000)).status === 'duplicate', {
      what: 'the retry to commit',
      timeoutMs: 20_000,
    });
    expect(seen).toEqual([true, true]);
    expect(await rows(String(event.id))).toHaveLength(1);
  } finally {
    await worker.close({ timeoutMs: 2000 });
    await queue.close();
  }
}

it('pg-boss runs the handlers in the Knex inbox: ctx.tx is the Knex transaction, the failed try rolls back', async () => {
  const queue = pgBossQueue({
    connectionString: DATABASE_URL,
    schema: `mw_boss_${run}`,
    name: 'orm',
    backoffMs: 200,
  });
  const store = new KnexDedupeStore({ knex, table: inbox });
  await store.migrate();
  const { front, back } = receivers(queue, store);
  const seen: boolean[] = [];
  back.on('message.delivered', async (event, ctx) => {
    const tx = ctx.tx;
    seen.push(tx.isTransaction === true);
    await tx(effects).insert({ event_id: String(event.id) });
    if (ctx.attempt === 1) throw new Error('first try fails after its write');
  });
  const worker = await createPgBossWorker({ receiver: back, queue, store, pollingIntervalSeconds: 0.5 });
  await retriedOnce({ front, store, worker, queue, seen }, (id) => knex(effects).where({ event_id: id }));
}, 40_000);

it('BullMQ runs the handlers in the Kysely inbox on MariaDB: ctx.tx is the Kysely transaction', async () => {
  const queue = bullmqQueue({
    connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
    prefix: `mw-test:${run}:bull`,
    name: 'orm',
    backoffMs: 50,
    allowVolatileRedis: true,
  });
  const store = new KyselyDedupeStore({ db: kysely, table: inbox });
  await store.migrate();
  const { front, back } = receivers(queue, store);
  const seen: boolean[] = [];
  back.on('message.delivered', async (event, ctx) => {
    const tx = ctx.tx;
    seen.push(tx.isTransaction);
    await tx
      .insertInto(effects)
      .values({ event_id: String(event.id) })
      .execute();
    if (ctx.attempt === 1) throw new Error('first try fails after its write');
  });
  const worker = await createBullmqWorker({ receiver: back, queue, store });
  await retriedOnce({ front, store, worker, queue, seen }, (id) =>
    kysely.selectFrom(effects).selectAll().where('event_id', '=', id).execute(),
  );
}, 40_000);

it('pg-boss runs the handlers in the Prisma inbox: ctx.tx is the Prisma transaction client', async () => {
  const queue = pgBossQueue({
    connectionString: DATABASE_URL,
    schema: `mw_boss_${run}`,
    name: 'orm_prisma',
    backoffMs: 200,
  });
  const store = new PrismaDedupeStore({ prisma, table: `${inbox}_prisma` });
  await store.migrate();
  const { front, back } = receivers(queue, store);
  const seen: boolean[] = [];
  back.on('message.delivered', async (event, ctx) => {
    const tx = ctx.tx;
    // A transaction client has no $disconnect: the client's lifecycle stays with the client.
    seen.push(!('$disconnect' in tx));
    await tx.$executeRawUnsafe(`INSERT INTO ${effects} (event_id) VALUES ($1)`, String(event.id));
    if (ctx.attempt === 1) throw new Error('first try fails after its write');
  });
  const worker = await createPgBossWorker({ receiver: back, queue, store, pollingIntervalSeconds: 0.5 });
  await retriedOnce({ front, store, worker, queue, seen }, (id) => knex(effects).where({ event_id: id }));
}, 40_000);

it('BullMQ runs the handlers in the TypeORM inbox on MariaDB: ctx.tx is the EntityManager', async () => {
  const queue = bullmqQueue({
    connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
    prefix: `mw-test:${run}:bull-typeorm`,
    name: 'orm',
    backoffMs: 50,
    allowVolatileRedis: true,
  });
  const store = new TypeOrmDedupeStore({ dataSource: typeorm, table: `${inbox}_typeorm` });
  await store.migrate();
  const { front, back } = receivers(queue, store);
  const seen: boolean[] = [];
  back.on('message.delivered', async (event, ctx) => {
    const tx = ctx.tx;
    seen.push(tx.queryRunner?.isTransactionActive === true);
    await tx.query(`INSERT INTO ${effects} (event_id) VALUES (?)`, [String(event.id)]);
    if (ctx.attempt === 1) throw new Error('first try fails after its write');
  });
  const worker = await createBullmqWorker({ receiver: back, queue, store });
  await retriedOnce({ front, store, worker, queue, seen }, (id) =>
    kysely.selectFrom(effects).selectAll().where('event_id', '=', id).execute(),
  );
}, 40_000);
