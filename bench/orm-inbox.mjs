// The transactional inbox on each ORM against the same work written by hand with that ORM:
// `npm run build && node bench/orm-inbox.mjs`.
// Per delivery, both do one fresh event's claim with a lease column, the handler's write of one row, the
// completion, in one transaction of the ORM (by hand: INSERT … ON CONFLICT DO NOTHING / INSERT IGNORE in the
// transaction; the store: its claim in its transaction, with the write and the completion). Contenders take
// turns round by round (bench/rounds.mjs), the order alternating, after four warm-up rounds each; the ratio is the
// median of the per-round ratios (each round's two samples ran back to back, under the same load: short rounds,
// many of them, so a burst of other work on the shared machine falls on one pair of samples, not on one side),
// and the ms per delivery the median of each side's samples. Statements per delivery are counted on one delivery
// of each (bench/statement-count.mjs).
// Env: DATABASE_URL, MYSQL_URL, DELIVERIES (per round, default 25), ROUNDS (61), ONLY (e.g. knex-postgres).
// Prisma runs on the clients the tests generate from test/stores/prisma/*.prisma (generated here when missing).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { and, sql as drizzleSql, eq } from 'drizzle-orm';
import { drizzle as mysqlDrizzle } from 'drizzle-orm/mysql2';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import knexFactory from 'knex';
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool } from 'mysql2';
import mysqlPromise from 'mysql2/promise';
import pg from 'pg';
import { DrizzleDedupeStore } from '../dist/src/stores/drizzle.js';
import { mysqlWebhookInbox, pgWebhookInbox } from '../dist/src/stores/drizzle-schema.js';
import { KnexDedupeStore, knexInboxMigration } from '../dist/src/stores/knex.js';
import { KyselyDedupeStore, kyselyInboxMigration } from '../dist/src/stores/kysely.js';
import { MysqlDedupeStore } from '../dist/src/stores/mysql.js';
import { PrismaDedupeStore } from '../dist/src/stores/prisma.js';
import { TypeOrmDedupeStore } from '../dist/src/stores/typeorm.js';
import { interleavedRounds, median } from './rounds.mjs';
import { statementsOf } from './statement-count.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const DELIVERIES = Number(process.env.DELIVERIES ?? 25);
const ROUNDS = Number(process.env.ROUNDS ?? 61);
const ONLY = process.env.ONLY?.split(',');
const run = randomUUID().replaceAll('-', '').slice(0, 8);
const inbox = `mw_bench_inbox_${run}`;
const hand = `mw_bench_hand_${run}`;
const effects = `mw_bench_effects_${run}`;
const LEASE_MS = 60_000;
const RETENTION_MS = 7 * 24 * 3600_000;

/** The lease and retention ends as each database writes them by hand. */
const until = {
  postgres: (ms) => `now() + interval '${ms / 1000} seconds'`,
  mysql: (ms) => `UTC_TIMESTAMP(3) + INTERVAL ${ms / 1000} SECOND`,
};

const orms = {
  knex: {
    open: (dialect) =>
      dialect === 'postgres'
        ? knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 1, max: 4 } })
        : knexFactory({ client: 'mysql2', connection: MYSQL_URL, pool: { min: 1, max: 4 } }),
    store: (knex) => new KnexDedupeStore({ knex, table: inbox }),
    migration: (table) => knexInboxMigration({ table }),
    write: (tx, id) => tx(effects).insert({ event_id: id }),
    byHand: (knex, dialect) => async (key, id) => {
      await knex.transaction(async (trx) => {
        const token = randomUUID();
        const row = { key, state: 'processing', token, expires_at: trx.raw(until[dialect](LEASE_MS)) };
        const claimed = await trx(hand).insert(row).onConflict('key').ignore();
        if (affected(claimed) !== 1) throw new Error('expected a claim');
        await trx(effects).insert({ event_id: id });
        await trx(hand)
          .where({ key, token })
          .update({ state: 'completed', token: null, expires_at: trx.raw(until[dialect](RETENTION_MS)) });
      });
    },
    close: (knex) => knex.destroy(),
    run: (knex, text) => knex.raw(text),
  },
  kysely: {
    open: (dialect) =>
      new Kysely({
        dialect:
          dialect === 'postgres'
            ? new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 4 }) })
            : new MysqlDialect({ pool: createPool({ uri: MYSQL_URL, connectionLimit: 4 }) }),
      }),
    store: (db) => new KyselyDedupeStore({ db, table: inbox }),
    migration: (table) => kyselyInboxMigration({ table }),
    write: (tx, id) => tx.insertInto(effects).values({ event_id: id }).execute(),
    byHand: (db, dialect) => async (key, id) => {
      const { sql } = await import('kysely');
      await db.transaction().execute(async (trx) => {
        const token = randomUUID();
        const row = { key, state: 'processing', token, expires_at: sql.raw(until[dialect](LEASE_MS)) };
        const insert = trx.insertInto(hand).values(row);
        const claimed = await (dialect === 'postgres'
          ? insert.onConflict((conflict) => conflict.column('key').doNothing())
          : insert.ignore()
        ).executeTakeFirst();
        if (Number(claimed.numInsertedOrUpdatedRows) !== 1) throw new Error('expected a claim');
        await trx.insertInto(effects).values({ event_id: id }).execute();
        await trx
          .updateTable(hand)
          .set({ state: 'completed', token: null, expires_at: sql.raw(until[dialect](RETENTION_MS)) })
          .where('key', '=', key)
          .where('token', '=', token)
          .execute();
      });
    },
    close: (db) => db.destroy(),
    run: async (db, text) => {
      const { sql } = await import('kysely');
      return sql.raw(text).execute(db);
    },
  },
};

orms.drizzle = {
  open: (dialect) =>
    dialect === 'postgres'
      ? pgDrizzle(new pg.Pool({ connectionString: DATABASE_URL, max: 4 }))
      : mysqlDrizzle(mysqlPromise.createPool({ uri: MYSQL_URL, connectionLimit: 4 })),
  store: (db) => new DrizzleDedupeStore({ db, table: inbox }),
  migration: (table) => ({ up: (db) => new DrizzleDedupeStore({ db, table }).migrate() }),
  write: (tx, id) => tx.execute(drizzleSql`INSERT INTO ${drizzleSql.raw(effects)} (event_id) VALUES (${id})`),
  byHand: (db, dialect) => {
    const table = dialect === 'postgres' ? pgWebhookInbox(hand) : mysqlWebhookInbox(hand);
    return async (key, id) => {
      await db.transaction(async (tx) => {
        const token = randomUUID();
        const row = { key, state: 'processing', token, expiresAt: drizzleSql.raw(until[dialect](LEASE_MS)) };
        const claimed =
          dialect === 'postgres'
            ? await tx.insert(table).values(row).onConflictDoNothing()
            : await tx.insert(table).ignore().values(row);
        if (affected(claimed) !== 1) throw new Error('expected a claim');
        await tx.execute(drizzleSql`INSERT INTO ${drizzleSql.raw(effects)} (event_id) VALUES (${id})`);
        await tx
          .update(table)
          .set({ state: 'completed', token: null, expiresAt: drizzleSql.raw(until[dialect](RETENTION_MS)) })
          .where(and(eq(table.key, key), eq(table.token, token)));
      });
    };
  },
  close: (db) => db.$client.end(),
  run: (db, text) => db.execute(drizzleSql.raw(text)),
};

/** mysql2 itself, for the MySQL store without an ORM (MySQL only). */
orms.mysql2 = {
  dialects: ['mysql'],
  open: () => mysqlPromise.createPool({ uri: MYSQL_URL, connectionLimit: 4 }),
  store: (pool) => new MysqlDedupeStore({ pool, table: inbox, transactional: true }),
  migration: (table) => ({ up: (pool) => new MysqlDedupeStore({ pool, table }).migrate() }),
  write: (tx, id) => tx.query(`INSERT INTO ${effects} (event_id) VALUES (?)`, [id]),
  byHand: (pool) => async (key, id) => {
    const connection = await pool.getConnection();
    try {
      await connection.query('START TRANSACTION');
      const token = randomUUID();
      const [claimed] = await connection.query(
        `INSERT IGNORE INTO ${hand} (\`key\`, state, token, expires_at) VALUES (?, 'processing', ?, ${until.mysql(LEASE_MS)})`,
        [key, token],
      );
      if (claimed.affectedRows !== 1) throw new Error('expected a claim');
      await connection.query(`INSERT INTO ${effects} (event_id) VALUES (?)`, [id]);
      await connection.query(
        `UPDATE ${hand} SET state = 'completed', token = NULL, expires_at = ${until.mysql(RETENTION_MS)} WHERE \`key\` = ? AND token = ?`,
        [key, token],
      );
      await connection.query('COMMIT');
    } catch (error) {
      await connection.query('ROLLBACK');
      throw error;
    } finally {
      connection.release();
    }
  },
  close: (pool) => pool.end(),
  run: (pool, text) => pool.query(text),
};

/** The Prisma clients the tests generate (scripts/prisma-test-clients.mjs), bundled to JavaScript for Node. */
async function prismaClient(dialect) {
  const { execFileSync } = await import('node:child_process');
  const { build } = await import('esbuild');
  execFileSync(process.execPath, ['scripts/prisma-test-clients.mjs'], { stdio: 'inherit' });
  const outfile = `node_modules/.cache/messaging-webhooks-bench/prisma-${dialect}.mjs`;
  await build({
    entryPoints: [`test/stores/prisma/generated/${dialect}/client.ts`],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  const { PrismaClient } = await import(new URL(`../${outfile}`, import.meta.url).href);
  const adapter =
    dialect === 'postgres'
      ? new (await import('@prisma/adapter-pg')).PrismaPg({ connectionString: DATABASE_URL, max: 4 })
      : new (await import('@prisma/adapter-mariadb')).PrismaMariaDb(
          `${MYSQL_URL.replace(/^mysql:/, 'mariadb:')}?connectionLimit=4`,
        );
  return new PrismaClient({ adapter });
}

/**
 * A claim and the completion by hand, with the ORM's raw statements in its own transaction, around the same
 * handler's write as the store's contender (`write`).
 */
const rawByHand = (transaction, exec, dialect, write) => async (key, id) => {
  await transaction(async (tx) => {
    const token = randomUUID();
    const [insert, p] =
      dialect === 'postgres'
        ? [
            `INSERT INTO ${hand} (key, state, token, expires_at) VALUES ($1, 'processing', $2, ${until.postgres(LEASE_MS)}) ON CONFLICT DO NOTHING`,
            (n) => `$${n}`,
          ]
        : [
            `INSERT IGNORE INTO ${hand} (\`key\`, state, token, expires_at) VALUES (?, 'processing', ?, ${until.mysql(LEASE_MS)})`,
            () => '?',
          ];
    if ((await exec(tx, insert, [key, token])) !== 1) throw new Error('expected a claim');
    await write(tx, id);
    const keyColumn = dialect === 'postgres' ? 'key' : '`key`';
    await exec(
      tx,
      `UPDATE ${hand} SET state = 'completed', token = NULL, expires_at = ${until[dialect](RETENTION_MS)} WHERE ${keyColumn} = ${p(1)} AND token = ${p(2)}`,
      [key, token],
    );
  });
};

orms.prisma = {
  open: (dialect) => prismaClient(dialect),
  store: (prisma) => new PrismaDedupeStore({ prisma, table: inbox }),
  migration: (table) => ({ up: (prisma) => new PrismaDedupeStore({ prisma, table }).migrate() }),
  write: (tx, id) => {
    const placeholder = tx._engineConfig?.activeProvider === 'mysql' ? '?' : '$1';
    return tx.$executeRawUnsafe(`INSERT INTO ${effects} (event_id) VALUES (${placeholder})`, id);
  },
  byHand: (prisma, dialect) =>
    rawByHand(
      (work) => prisma.$transaction(work),
      (tx, text, values) => tx.$executeRawUnsafe(text, ...values),
      dialect,
      orms.prisma.write,
    ),
  close: (prisma) => prisma.$disconnect(),
  run: (prisma, text) => prisma.$executeRawUnsafe(text),
};

orms.typeorm = {
  open: async (dialect) => {
    const { DataSource } = await import('typeorm');
    const url = dialect === 'postgres' ? DATABASE_URL : MYSQL_URL;
    return new DataSource({ type: dialect, url, poolSize: 4 }).initialize();
  },
  store: (dataSource) => new TypeOrmDedupeStore({ dataSource, table: inbox }),
  migration: (table) => ({ up: (dataSource) => new TypeOrmDedupeStore({ dataSource, table }).migrate() }),
  write: (tx, id) =>
    tx.createQueryBuilder().insert().into(effects, ['event_id']).values({ event_id: id }).execute(),
  byHand: (dataSource, dialect) =>
    rawByHand(
      (work) => dataSource.transaction(work),
      async (tx, text, values) => (await tx.queryRunner.query(text, values, true)).affected,
      dialect,
      orms.typeorm.write,
    ),
  close: (dataSource) => dataSource.destroy(),
  run: (dataSource, text) => dataSource.query(text),
};

function affected(result) {
  if (Array.isArray(result) && typeof result[0]?.affectedRows === 'number') return result[0].affectedRows;
  return result?.rowCount ?? (Array.isArray(result) ? result.length : 0);
}

const stamp = `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} cores, load average ${os
  .loadavg()
  .map((n) => n.toFixed(2))
  .join(' ')}`;
console.log(`ORM inbox vs the same work by hand (${stamp}); ${DELIVERIES} deliveries × ${ROUNDS} rounds`);
console.log(
  '| ORM | database | store ms/delivery | by hand ms/delivery | store speed ÷ by hand (median of rounds; lowest–highest) | statements store / by hand |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: |');

for (const [orm, kit] of Object.entries(orms)) {
  for (const dialect of kit.dialects ?? ['postgres', 'mysql']) {
    if (ONLY && !ONLY.includes(`${orm}-${dialect}`)) continue;
    const db = await kit.open(dialect);
    try {
      await kit.migration(inbox).up(db);
      await kit.migration(hand).up(db);
      await kit.run(db, `CREATE TABLE ${effects} (event_id varchar(200) NOT NULL)`);
      const store = kit.store(db);
      let n = 0;
      const contenders = {
        // As the receiver takes it: the claim inside the event's transaction where the store offers that.
        store: async (key, id) => {
          if (store.claimInTransaction) {
            const open = await store.claimInTransaction(key, LEASE_MS);
            if (open.status !== 'claimed') throw new Error(`expected a claim, got ${open.status}`);
            await open.run(RETENTION_MS, (tx) => kit.write(tx, id));
            return;
          }
          const claim = await store.claim(key, LEASE_MS);
          if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
          await store.transact(key, claim.token, RETENTION_MS, (tx) => kit.write(tx, id));
        },
        byHand: kit.byHand(db, dialect),
      };
      const samples = await interleavedRounds(
        contenders,
        async (deliver) => {
          const started = performance.now();
          for (let i = 0; i < DELIVERIES; i++) {
            const id = `evt_${run}_${++n}`;
            await deliver(`live:${id}`, id);
          }
          return (performance.now() - started) / DELIVERIES;
        },
        { rounds: ROUNDS, warmups: 4 },
      );
      const ratios = samples.store.map((storeMs, round) => samples.byHand[round] / storeMs);
      const statements = [];
      for (const name of ['store', 'byHand']) {
        const id = `evt_${run}_${++n}`;
        statements.push(await statementsOf(() => contenders[name](`live:${id}`, id)));
      }
      const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
      console.log(
        `| ${orm} | ${dialect} | ${median(samples.store).toFixed(3)} | ${median(samples.byHand).toFixed(3)} | ${median(ratios).toFixed(2)}× (${spread}) | ${statements.join(' / ')} |`,
      );
    } finally {
      for (const table of [inbox, hand, effects]) await kit.run(db, `DROP TABLE IF EXISTS ${table}`);
      await kit.close(db);
    }
  }
}
