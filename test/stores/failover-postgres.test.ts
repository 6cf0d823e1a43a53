import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { testRun } from '../support/harness/cluster.js';
import { eventIds } from '../support/harness/sender.js';
import {
  acknowledgedIds,
  countingReceiver,
  deliverThroughKill,
  fleetDeliveries,
  haSettings,
  serve,
} from '../support/topologies/failover-run.js';
import { type PostgresPair, startPostgresPair } from '../support/topologies/postgres.js';
import { tcpProxy } from '../support/topologies/tcp-proxy.js';
import { until } from '../support/until.js';

/*
 * The transactional PostgreSQL store on a primary with a synchronous streaming standby, behind a TCP proxy (as
 * PgBouncer or HAProxy would be). Two receivers take 60 events and 20 copies, 8 at a time; once 40% were
 * acknowledged the primary's machine is lost (postmaster and backends SIGKILLed), the proxy is pointed at the
 * standby while it is still read-only, and then the standby is promoted. Counted: events answered 200 whose effect
 * row is not on the new primary (must be 0), effects written twice (must be 0: they commit with the mark), answers
 * other than 2xx (all 503 with Retry-After, never a 500), and the seconds to recover.
 */
const { run, secret } = testRun();
const settings = haSettings();
const table = `mw_ha_${run}`;
const effects = `${table}_effects`;
let pair: PostgresPair;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  pair = await startPostgresPair({ synchronous: settings.synchronous });
  proxy = await tcpProxy(pair.primaryPort);
}, 90_000);

afterAll(async () => {
  await Promise.allSettled(pools.map((pool) => pool.end()));
  await proxy?.close();
  await pair?.stop();
});

function poolOf(port: number) {
  const pool = new pg.Pool({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    max: 6,
    connectionTimeoutMillis: 2000,
  });
  pool.on('error', () => {});
  pools.push(pool);
  return pool;
}

async function receiverOn(pool: pg.Pool) {
  const store = new PostgresDedupeStore({ pool, table, transactional: true });
  const errors: string[] = [];
  // A claim whose request failed with the primary keeps its lease: a short one ends the 409s soon after.
  const receiver = createReceiver({ secrets: secret, store, leaseMs: 3000 });
  receiver.on('message.delivered', async (event, ctx) => {
    await ctx.tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [event.id]);
  });
  receiver.onError((error) => {
    errors.push(error.message);
  });
  return { receiver, store, errors };
}

it(
  'the primary lost at 40%, synchronous standby promoted: 0 acknowledged events lost, 0 doubles, 503s only',
  async () => {
    const instances = await Promise.all([1, 2].map(() => receiverOn(poolOf(proxy.port))));
    await instances[0]?.store.migrate();
    await (pools[0] as pg.Pool).query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);
    const servers = await Promise.all(instances.map((instance) => serve(instance.receiver)));
    const ids = eventIds(run, settings.events);
    try {
      const result = await deliverThroughKill(
        fleetDeliveries(
          ids,
          settings.copies,
          servers.map((server) => server.url),
        ),
        {
          secret,
          concurrency: 8,
          killAt: 0.4,
          kill: async () => {
            await pair.killPrimary();
            // The proxy moves to the standby before it is promoted: it answers read-only for a moment.
            proxy.retarget(pair.standbyPort);
            await pair.promote();
          },
          deadlineMs: settings.deadlineMs,
        },
      );
      expect(acknowledgedIds(result.attempts)).toEqual(new Set(ids));
      const promoted = poolOf(pair.standbyPort);
      const { rows } = await promoted.query(
        `SELECT event_id, count(*)::int AS n FROM ${effects} GROUP BY event_id`,
      );
      const written = new Map(rows.map((row) => [row.event_id as string, row.n as number]));
      const lost = ids.filter((id) => !written.has(id));
      const doubles = ids.filter((id) => (written.get(id) ?? 0) > 1);
      console.info(
        `PostgreSQL, ${settings.synchronous ? 'synchronous' : 'asynchronous'} standby: lost ${lost.length}, run twice ${doubles.length}, failed requests ` +
          `${result.failed}, recovered in ${result.recoverySeconds.toFixed(1)} s`,
        result.tally,
      );
      if (settings.safe) expect(lost, 'acknowledged events lost').toEqual([]);
      expect(doubles, 'effects written twice').toEqual([]);
      const failures = Object.keys(result.tally).filter((label) => !/^(200|202)/.test(label));
      expect(
        failures.filter((label) => !/^(503 store_unavailable|409 event_in_progress)$/.test(label)),
      ).toEqual([]);
      expect(
        result.attempts.every((attempt) => attempt.status !== 503 || Number(attempt.retryAfter) > 0),
      ).toBe(true);
      expect(result.failed).toBeGreaterThan(0);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  },
  settings.deadlineMs + 15_000,
);

it('a promoted standby that inherited synchronous_standby_names: each delivery 503 store_unavailable within the store deadline', async () => {
  // The trap: pg_basebackup copied the primary's synchronous_standby_names, and the promoted standby has no
  // standby of its own, so every commit waits for one forever.
  const trap = await startPostgresPair({ synchronous: true, inheritSynchronous: true });
  const trapPools: pg.Pool[] = [];
  const poolOn = (port: number) => {
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
      max: 4,
      connectionTimeoutMillis: 2000,
    });
    pool.on('error', () => {});
    trapPools.push(pool);
    return pool;
  };
  const operationTimeoutMs = 1000;
  try {
    const trapTable = `${table}_trap`;
    await new PostgresDedupeStore({ pool: poolOn(trap.primaryPort), table: trapTable }).migrate();
    await trap.killPrimary();
    await trap.promote();
    const promoted = poolOn(trap.standbyPort);
    // The claim is the first write of either store, transactional or not: it meets the trap first.
    const store = new PostgresDedupeStore({ pool: promoted, table: trapTable, operationTimeoutMs });
    const { deliver, runs, errors } = countingReceiver(store, secret);
    for (const id of eventIds(`${run}_trap`, 3)) {
      const started = performance.now();
      const outcome = await deliver(id);
      const took = performance.now() - started;
      expect([outcome.status, outcome.reason]).toEqual([503, 'store_unavailable']);
      expect(Number(outcome.headers['retry-after'])).toBeGreaterThan(0);
      // Bounded by the store's deadline (with room for a busy machine), never held by the blocked commit.
      expect(took).toBeLessThan(operationTimeoutMs + 1500);
    }
    expect(runs.size).toBe(0);
    expect(errors.join('\n')).toMatch(/within 1000 ms \(operationTimeoutMs\)/);
    // The server shows why: the claims' commits wait for a synchronous standby that does not exist.
    const { rows } = await promoted.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
    );
    expect(rows[0]?.n).toBeGreaterThan(0);

    // The documented fix: clear the setting on the promoted server; writes go through again.
    await promoted.query("ALTER SYSTEM SET synchronous_standby_names = ''");
    await promoted.query('SELECT pg_reload_conf()');
    const [after] = eventIds(`${run}_trap_after`, 1);
    await until(async () => (await deliver(after as string)).status === 200, {
      what: 'a delivery processed once the setting is cleared',
    });
    expect(runs.get(after as string)).toBe(1);
  } finally {
    await Promise.allSettled(trapPools.map((pool) => pool.end()));
    await trap.stop();
  }
}, 90_000);
