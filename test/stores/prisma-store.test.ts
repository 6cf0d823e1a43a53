import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/base/errors.js';
import { createReceiver } from '../../src/index.js';
import { PrismaDedupeStore } from '../../src/stores/prisma.js';
import { createEvent } from '../../src/testing.js';
import { SECRET } from '../hardening/targets.js';
import { signedDelivery } from '../support/independent-signing.js';
import { until } from '../support/until.js';
import { PrismaClient as MysqlPrisma } from './prisma/generated/mysql/client.js';
import { PrismaClient as PostgresPrisma } from './prisma/generated/postgres/client.js';
import { describeStoreConformance } from './store-conformance.js';
import { describeTransactionalInbox } from './transactional-inbox-conformance.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = (process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test').replace(
  /^mysql:/,
  'mariadb:',
);
const table = `mw_prisma_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const run = randomUUID().slice(0, 8);
const LEASE = { leaseMs: 600, slackMs: 100, advance: sleep };

// The effects table is the Effect model's (its name is fixed by @@map): every run's rows carry its own ids.
const EFFECTS_DDL = {
  postgres: 'CREATE TABLE IF NOT EXISTS mw_prisma_effects (id serial PRIMARY KEY, event_id text NOT NULL)',
  mysql:
    'CREATE TABLE IF NOT EXISTS mw_prisma_effects (id INT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(200) NOT NULL)',
};

const databases = {
  postgres: new PostgresPrisma({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 10 }) }),
  mysql: new MysqlPrisma({ adapter: new PrismaMariaDb(`${MYSQL_URL}?connectionLimit=10`) }),
};
type Client = (typeof databases)[keyof typeof databases];
type Tx = Parameters<Parameters<PostgresPrisma['$transaction']>[0]>[0];

afterAll(async () => {
  for (const prisma of Object.values(databases) as Client[]) {
    await prisma.$executeRawUnsafe(`DROP TABLE IF EXISTS ${table}`);
    await prisma.$executeRawUnsafe(`DELETE FROM mw_prisma_effects WHERE event_id LIKE '%${run}%'`);
    await prisma.$disconnect();
  }
});

for (const [name, prisma] of Object.entries(databases) as Array<[keyof typeof databases, Client]>) {
  const store = new PrismaDedupeStore({ prisma: prisma as PostgresPrisma, table });
  const rows = (eventId: string) => (prisma as PostgresPrisma).effect.count({ where: { eventId } });

  beforeAll(async () => {
    await store.migrate();
    await prisma.$executeRawUnsafe(EFFECTS_DDL[name]);
  });

  describeStoreConformance(`prisma on ${name}`, () => ({ store, ...LEASE }));
  describeTransactionalInbox(`prisma on ${name}`, () => ({
    store,
    // The handler's write through the model API of the transaction client, as an app writes.
    write: (tx: Tx, id: string) => tx.effect.create({ data: { eventId: id } }),
    rows,
  }));

  describe(`PrismaDedupeStore on ${name}`, () => {
    it('a handler past the interactive-transaction timeout: 503 with Retry-After, onError names the option, no row', async () => {
      const slow = new PrismaDedupeStore({
        prisma: prisma as PostgresPrisma,
        table,
        transactionTimeoutMs: 300,
      });
      const receiver = createReceiver({ secrets: SECRET, store: slow });
      const errors: unknown[] = [];
      receiver.onError((error) => {
        errors.push(error);
      });
      let expired = true;
      receiver.onAny(async (event, ctx) => {
        await ctx.tx.effect.create({ data: { eventId: String(event.id) } });
        if (!expired) return;
        // The handler outlives the transaction and swallows what Prisma tells it: it returns as if done.
        await until(
          async () =>
            ctx.tx.$queryRawUnsafe('SELECT 1').then(
              () => false,
              () => true,
            ),
          { what: "Prisma's transaction timeout to end the transaction" },
        );
      });
      const id = `evt_slow_${run}_${name}`;
      const body = JSON.stringify(createEvent('message.delivered', { id }));
      const deliver = () => receiver.receive(signedDelivery(body));
      const outcome = await deliver();
      expect(outcome.status).toBe(503);
      expect(Number(outcome.headers['retry-after'])).toBeGreaterThan(0);
      expect(await rows(id)).toBe(0);
      expect(String(errors.map((error) => `${error}`))).toMatch(/transactionTimeoutMs/);
      expired = false;
      expect((await deliver()).status).toBe(200);
      expect(await rows(id)).toBe(1);
      await receiver.close({ timeoutMs: 1000 });
    });

    it('names the model or SQL to apply when the table is missing', async () => {
      const missing = new PrismaDedupeStore({ prisma: prisma as PostgresPrisma, table: `${table}_missing` });
      await expect(missing.claim('live:evt_x', 1000)).rejects.toThrow(
        /does not exist: run `await store\.migrate\(\)`.*WebhookInbox model in sql\/webhook_inbox/,
      );
    });

    it('refuses a transaction client in place of the PrismaClient', async () => {
      await (prisma as PostgresPrisma).$transaction(async (tx) => {
        expect(() => new PrismaDedupeStore({ prisma: tx as unknown as PostgresPrisma })).toThrow(
          /got a Prisma transaction client/,
        );
      });
    });
  });
}

describe('PrismaDedupeStore misuse', () => {
  it('says what to pass for something that is not a PrismaClient, and checks its options', () => {
    expect(() => new PrismaDedupeStore({ prisma: {} as PostgresPrisma })).toThrow(WebhookConfigError);
    expect(() => new PrismaDedupeStore({ prisma: undefined as unknown as PostgresPrisma })).toThrow(
      /the app's PrismaClient/,
    );
    const method = async () => 0;
    const sqlite = {
      $transaction: method,
      $queryRawUnsafe: method,
      $executeRawUnsafe: method,
      $disconnect: method,
      _engineConfig: { activeProvider: 'sqlite' },
    };
    expect(() => new PrismaDedupeStore({ prisma: sqlite })).toThrow(/PostgreSQL and MySQL.*"sqlite"/);
    expect(() => new PrismaDedupeStore({ prisma: databases.postgres, transactionTimeoutMs: 0 })).toThrow(
      /transactionTimeoutMs.*positive whole number/,
    );
    expect(() => new PrismaDedupeStore({ prisma: databases.postgres, table: 'x; DROP' })).toThrow(
      /letters, digits/,
    );
  });

  it('the schemas the tests generate from hold the WebhookInbox models sql/ ships', () => {
    for (const [schema, model] of [
      ['postgres.prisma', 'webhook_inbox.prisma'],
      ['mysql.prisma', 'webhook_inbox.mysql.prisma'],
    ]) {
      const shipped = readFileSync(new URL(`../../sql/${model}`, import.meta.url), 'utf8');
      const block = shipped.slice(shipped.indexOf('model WebhookInbox'));
      expect(readFileSync(new URL(`./prisma/${schema}`, import.meta.url), 'utf8')).toContain(block);
    }
  });
});
