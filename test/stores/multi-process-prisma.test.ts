import { join } from 'node:path';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PrismaDedupeStore } from '../../src/stores/prisma.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { expectEachRowOnce } from './multi-process-sql.js';
import { PrismaClient as MysqlPrisma } from './prisma/generated/mysql/client.js';
import { PrismaClient as PostgresPrisma } from './prisma/generated/postgres/client.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const EFFECTS_DDL = {
  postgres: 'CREATE TABLE IF NOT EXISTS mw_prisma_effects (id serial PRIMARY KEY, event_id text NOT NULL)',
  mysql:
    'CREATE TABLE IF NOT EXISTS mw_prisma_effects (id INT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(200) NOT NULL)',
};

/** The generated client (TypeScript) as one JavaScript module the receiver processes import, beside node_modules. */
async function bundledClient(database: string, run: string): Promise<string> {
  const outfile = join(
    process.cwd(),
    `node_modules/.cache/messaging-webhooks-tests/prisma-${database}-${run}.mjs`,
  );
  await build({
    entryPoints: [join(process.cwd(), `test/stores/prisma/generated/${database}/client.ts`)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

beforeAll(async () => {
  await buildPackage();
});

for (const database of ['postgres', 'mysql'] as const) {
  describe.skipIf(process.env.CI_REPEAT_RUN === '1')(`Prisma on ${database}`, () => {
    const { run } = testRun();
    const table = `mw_inbox_${run}`;
    const prisma =
      database === 'postgres'
        ? new PostgresPrisma({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 2 }) })
        : new MysqlPrisma({
            adapter: new PrismaMariaDb(`${MYSQL_URL.replace(/^mysql:/, 'mariadb:')}?connectionLimit=2`),
          });
    const client = prisma as PostgresPrisma;

    beforeAll(async () => {
      await new PrismaDedupeStore({ prisma: client, table }).migrate();
      // No unique constraint on purpose: a second write of an event must show, not be rejected.
      await client.$executeRawUnsafe(EFFECTS_DDL[database]);
    });

    afterAll(async () => {
      await client.$executeRawUnsafe(`DROP TABLE IF EXISTS ${table}`);
      await client.$executeRawUnsafe(`DELETE FROM mw_prisma_effects WHERE event_id LIKE '%${run}%'`);
      await client.$disconnect();
    });

    it('300 events × 4 shuffled copies over 3 processes, one killed mid-transaction: each row once', async () => {
      const counts = await expectEachRowOnce({
        store: `prisma-${database}`,
        url: database === 'postgres' ? DATABASE_URL : MYSQL_URL,
        table,
        effectsTable: 'mw_prisma_effects',
        run,
        prismaClient: await bundledClient(database, run),
        rows: async () => {
          const rows = await client.effect.groupBy({
            by: ['eventId'],
            where: { eventId: { contains: run } },
            _count: { _all: true },
          });
          return new Map(rows.map((row) => [row.eventId, row._count._all]));
        },
      });
      console.info(`Prisma on ${database}`, counts);
    }, 90_000);
  });
}
