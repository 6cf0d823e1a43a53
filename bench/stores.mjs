// Dedupe store speed: `npm run bench:stores` (builds, then runs `node bench/stores.mjs`).
// Each processed event is one claim + one complete of a fresh key, as the receiver does it. For every store,
// with 1 and with 50 events in flight: events/s, p50/p99 latency of claim+complete, and the round trips to
// the server per processed event, counted by wrapping the client the store is given.
// Contenders take turns round by round and the median round (by events/s) is reported.
// Env: REDIS_URL, DATABASE_URL, EVENTS (per remote round, default 2000), ROUNDS (3), ONLY (store names).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import { MemoryDedupeStore } from '../dist/src/index.js';
import { PostgresDedupeStore } from '../dist/src/stores/postgres.js';
import { RedisDedupeStore } from '../dist/src/stores/redis.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.EVENTS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ONLY = process.env.ONLY?.split(',');
const LEASE_MS = 60_000;
const RETENTION_MS = 3_600_000;
const run = randomUUID().slice(0, 8);

const trips = { count: 0 };

/** node-redis, seen through the two members the store uses, counting commands sent. */
function countingRedis(client) {
  return {
    get isReady() {
      return client.isReady;
    },
    sendCommand(args) {
      trips.count++;
      return client.sendCommand(args);
    },
  };
}

/** A pg Pool counting queries, also those on clients it lends out (transactional mode). */
function countingPool(pool) {
  const countQueries = (target) => ({
    query: (...args) => {
      trips.count++;
      return target.query(...args);
    },
  });
  return {
    ...countQueries(pool),
    connect: async () => {
      const client = await pool.connect();
      return { ...countQueries(client), release: (error) => client.release(error) };
    },
  };
}

async function measure(store, events, concurrency, { transact = false, round = 0 } = {}) {
  const latencies = [];
  let next = 0;
  const processOne = async (key) => {
    const started = performance.now();
    const claim = await store.claim(key, LEASE_MS);
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    if (transact) await store.transact(key, claim.token, RETENTION_MS, async () => {});
    else if (!(await store.complete(key, claim.token, RETENTION_MS))) throw new Error('complete failed');
    latencies.push(performance.now() - started);
  };
  const prefix = `live:evt_bench_${run}_${concurrency}_${round}_${transact ? 't' : 'p'}_`;
  // Warm-up: connections opened, scripts loaded, statements planned.
  for (let i = 0; i < Math.min(200, events / 10); i++) await processOne(`${prefix}warm_${i}`);
  latencies.length = 0;
  trips.count = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < events) await processOne(`${prefix}${next++}`);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return {
    eventsPerSecond: Math.round(events / seconds),
    p50: at(0.5),
    p99: at(0.99),
    trips: trips.count / events,
  };
}

const contenders = [];
function contender(name, store, events, options = {}) {
  if (!ONLY || ONLY.some((only) => name.startsWith(only))) contenders.push({ name, store, events, options });
}

const redis = createClient({ url: REDIS_URL });
redis.on('error', (error) => console.error('redis:', error.message));
await redis.connect();
const redisPrefix = `mw-bench:${run}:`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
pool.on('error', (error) => console.error('postgres:', error.message));
const table = `mw_bench_${run}`;

const rows = [];
try {
  await new PostgresDedupeStore({ pool, table }).migrate();
  contender('memory', new MemoryDedupeStore({ maxEntries: 10_000_000 }), EVENTS * 20);
  contender('redis', new RedisDedupeStore({ client: countingRedis(redis), prefix: redisPrefix }), EVENTS);
  contender('postgres', new PostgresDedupeStore({ pool: countingPool(pool), table }), EVENTS);
  const transactional = new PostgresDedupeStore({ pool: countingPool(pool), table, transactional: true });
  contender('postgres transactional (empty handler)', transactional, EVENTS, { transact: true });
  // Contenders take turns round by round, so background load hits them alike; the median round is reported.
  for (const concurrency of [1, 50]) {
    const results = new Map(contenders.map(({ name }) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const { name, store, events, options } of contenders) {
        const result = await measure(store, events, concurrency, { ...options, round });
        results.get(name).push(result);
        console.error(`${name} ×${concurrency} round ${round + 1}: ${result.eventsPerSecond} events/s`);
      }
    }
    for (const [name, rounds] of results) {
      rounds.sort((a, b) => a.eventsPerSecond - b.eventsPerSecond);
      rows.push({ name, concurrency, ...rounds[Math.floor(rounds.length / 2)] });
    }
  }
} finally {
  for await (const keys of redis.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await redis.del(keys);
  }
  redis.destroy();
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
}

const ms = (value) => value.toFixed(value < 1 ? 3 : 2);
console.log('| store | in flight | events/s | p50 ms | p99 ms | round trips / event |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) {
  const roundTrips = row.name === 'memory' ? '0' : row.trips.toFixed(2);
  console.log(
    `| ${row.name} | ${row.concurrency} | ${row.eventsPerSecond.toLocaleString('en-US')} | ${ms(row.p50)} | ${ms(row.p99)} | ${roundTrips} |`,
  );
}
