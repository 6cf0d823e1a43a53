// Where the Prisma store's time goes on PostgreSQL, beside the same work by hand (bench/orm-inbox.mjs's hand
// route): `npm run build && node bench/orm-inbox-cpu.mjs` (bench/orm-inbox.mjs once before, for the client).
// Each contender runs one delivery as in bench/orm-inbox.mjs (BEGIN, claim, the handler's write, the completion,
// COMMIT); the hand route with the store's claim, its completion or both swapped in, then the store itself. Per
// delivery: wall time, this process's CPU (Prisma, pg, the store) and the server backend's CPU, read from its
// /proc/<pid>/schedstat (a pool of one connection, so one backend serves every statement). CPU, not wall, is
// what the shared machine lets compare: wall follows CPU there, each microsecond of it waiting for a core.
// Env: DATABASE_URL, DELIVERIES (per round, default 25), ROUNDS (61), ONLY (contenders, `;` between: hand;store).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { PrismaDedupeStore } from '../dist/src/stores/prisma.js';
import { interleavedRounds, median } from './rounds.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DELIVERIES = Number(process.env.DELIVERIES ?? 25);
const ROUNDS = Number(process.env.ROUNDS ?? 61);
const ONLY = process.env.ONLY?.split(';');
const LEASE_MS = 60_000;
const RETENTION_MS = 7 * 24 * 3600_000;

const client = 'node_modules/.cache/messaging-webhooks-bench/prisma-postgres.mjs';
if (!fs.existsSync(client))
  throw new Error(`${client} is missing: run ONLY=prisma-postgres node bench/orm-inbox.mjs`);
const { PrismaClient } = await import(new URL(`../${client}`, import.meta.url).href);
const { PrismaPg } = await import('@prisma/adapter-pg');
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 1 }) });

const run = randomUUID().replaceAll('-', '').slice(0, 8);
const inbox = `mw_bench_cpu_inbox_${run}`;
const effects = `mw_bench_cpu_effects_${run}`;
const store = new PrismaDedupeStore({ prisma, table: inbox });
await store.migrate();
await prisma.$executeRawUnsafe(`CREATE TABLE ${effects} (event_id varchar(200) NOT NULL)`);
const backend = Number((await prisma.$queryRawUnsafe('SELECT pg_backend_pid() AS pid'))[0].pid);
const serverNs = () => Number(fs.readFileSync(`/proc/${backend}/schedstat`, 'utf8').split(' ')[0]);

const ms = `now() + $3::float8 * interval '1 millisecond'`;
const lock = `pg_try_advisory_xact_lock(hashtextextended('${inbox}:' || $1::text, 0))`;
/** The statements as the hand route writes them, and as the store does (src/stores/sql-inbox-sql.ts, postgres-sql.ts). */
const claims = {
  hand: `INSERT INTO ${inbox} (key, state, token, expires_at) VALUES ($1, 'processing', $2, now() + interval '60 seconds') ON CONFLICT DO NOTHING`,
  store: `INSERT INTO "${inbox}" (key, state, token, expires_at)
SELECT $1::text, 'processing', $2::text, now() + $3::interval WHERE ${lock}
ON CONFLICT DO NOTHING`,
  storeNoLock: `INSERT INTO "${inbox}" (key, state, token, expires_at)
VALUES ($1::text, 'processing', $2::text, now() + $3::interval)
ON CONFLICT DO NOTHING`,
};
const completions = {
  hand: `UPDATE ${inbox} SET state = 'completed', token = NULL, expires_at = now() + interval '604800 seconds' WHERE key = $1 AND token = $2`,
  store: `UPDATE "${inbox}" SET state = 'completed', token = NULL, expires_at = now() + $3::interval, updated_at = now()
WHERE key = $1 AND token = $2 AND state = 'processing'`,
  /** The raw-driver store's completion (the retention in milliseconds times an interval). */
  milliseconds: `UPDATE "${inbox}" SET state = 'completed', token = NULL, expires_at = ${ms}, updated_at = now()
WHERE key = $1 AND token = $2 AND state = 'processing'`,
};
const third = {
  [claims.store]: `${LEASE_MS} milliseconds`,
  [claims.storeNoLock]: `${LEASE_MS} milliseconds`,
  [completions.store]: `${RETENTION_MS} milliseconds`,
  [completions.milliseconds]: RETENTION_MS,
};

const write = (tx, id) => tx.$executeRawUnsafe(`INSERT INTO ${effects} (event_id) VALUES ($1)`, id);
const byHand = (claim, completion) => async (key, id) => {
  await prisma.$transaction(async (tx) => {
    const token = randomUUID();
    const claimValues = claim in third ? [key, token, third[claim]] : [key, token];
    if ((await tx.$executeRawUnsafe(claim, ...claimValues)) !== 1) throw new Error('expected a claim');
    await write(tx, id);
    const values = completion in third ? [key, token, third[completion]] : [key, token];
    await tx.$executeRawUnsafe(completion, ...values);
  });
};
const contenders = {
  hand: byHand(claims.hand, completions.hand),
  'hand, store claim': byHand(claims.store, completions.hand),
  'hand, store claim without lock': byHand(claims.storeNoLock, completions.hand),
  'hand, store completion': byHand(claims.hand, completions.store),
  'hand, raw-driver store completion': byHand(claims.hand, completions.milliseconds),
  'hand, store statements': byHand(claims.store, completions.store),
  store: async (key, id) => {
    const open = await store.claimInTransaction(key, LEASE_MS);
    if (open.status !== 'claimed') throw new Error(`expected a claim, got ${open.status}`);
    await open.run(RETENTION_MS, (tx) => write(tx, id));
  },
};
for (const name of Object.keys(contenders)) if (ONLY && !ONLY.includes(name)) delete contenders[name];

const names = new Map(Object.entries(contenders).map(([name, deliver]) => [deliver, name]));
const cpu = Object.fromEntries(Object.keys(contenders).map((name) => [name, { client: [], server: [] }]));
let n = 0;
try {
  const samples = await interleavedRounds(
    contenders,
    async (deliver) => {
      const [clientStart, serverStart, started] = [process.cpuUsage(), serverNs(), performance.now()];
      for (let i = 0; i < DELIVERIES; i++) {
        const id = `evt_${run}_${++n}`;
        await deliver(`live:${id}`, id);
      }
      const wall = (performance.now() - started) / DELIVERIES;
      const used = process.cpuUsage(clientStart);
      cpu[names.get(deliver)].client.push((used.user + used.system) / DELIVERIES);
      cpu[names.get(deliver)].server.push((serverNs() - serverStart) / 1000 / DELIVERIES);
      return wall;
    },
    { rounds: ROUNDS, warmups: 4 },
  );
  const load = (await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `Prisma on PostgreSQL, ${DELIVERIES} deliveries × ${ROUNDS} rounds, Node ${process.version}, load ${load}`,
  );
  console.log('| contender | ms/delivery | hand ÷ it (median of rounds) | client CPU µs | server CPU µs |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const name of Object.keys(contenders)) {
    const measured = (list) => median(list.slice(4)).toFixed(0);
    const ratio = samples.hand ? median(samples.hand.map((hand, round) => hand / samples[name][round])) : 1;
    console.log(
      `| ${name} | ${median(samples[name]).toFixed(3)} | ${ratio.toFixed(2)}× | ${measured(cpu[name].client)} | ${measured(cpu[name].server)} |`,
    );
  }
} finally {
  for (const table of [inbox, effects]) await prisma.$executeRawUnsafe(`DROP TABLE IF EXISTS ${table}`);
  await prisma.$disconnect();
}
