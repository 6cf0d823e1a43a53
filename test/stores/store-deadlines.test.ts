import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import type { DedupeStore } from '../../src/stores/types.js';
import { createEvent } from '../../src/testing.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { silentServer } from '../support/harness/silent-server.js';
import { recordingReceiver } from '../support/recording-receiver.js';
import { until } from '../support/until.js';

/*
 * Every store operation has a deadline (operationTimeoutMs): a locked table, a paused Redis or a server that
 * accepts and never answers fails the operation with an error naming the store and the deadline, soon after
 * it, instead of holding the request. The bound checked is generous (deadline + 1.5 s) for a busy machine.
 */
const DEADLINE_MS = 300;
const LATE_MS = DEADLINE_MS + 1500;

async function rejectsInTime(operation: Promise<unknown>): Promise<Error> {
  const started = performance.now();
  const error = await operation.then(
    () => {
      throw new Error('the operation resolved; it should have passed its deadline');
    },
    (failure: Error) => failure,
  );
  expect(performance.now() - started).toBeLessThan(LATE_MS);
  expect(error.message).toMatch(new RegExp(`within ${DEADLINE_MS} ms \\(operationTimeoutMs\\)`));
  return error;
}

const receiverOn = (store: DedupeStore) => recordingReceiver(store, 'whsec_store_deadlines');

describe('PostgreSQL store deadlines', () => {
  const table = `mw_deadline_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  const store = new PostgresDedupeStore({ pool, table, operationTimeoutMs: DEADLINE_MS });

  beforeAll(() => store.migrate());
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  });

  it('validates operationTimeoutMs', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '3000']) {
      expect(() => new PostgresDedupeStore({ pool, operationTimeoutMs: bad as unknown as number })).toThrow(
        /operationTimeoutMs must be a whole number/,
      );
    }
    expect(new PostgresDedupeStore({ pool }).operationTimeoutMs).toBe(3000);
  });

  it('a claim on a locked table rejects at the deadline, lands nothing, and works once the lock is gone', async () => {
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      await rejectsInTime(store.claim('live:evt_locked', 500));
      await rejectsInTime(store.renew('live:evt_locked', 'token', 500));
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    // Rolled back on the server (lock_timeout) before this side's deadline: nothing of it lands afterwards.
    expect((await store.claim('live:evt_locked', 60_000)).status).toBe('claimed');
  });

  it('a claim answered 503 behind a lock leaves no lease once the lock clears: the retry runs', async () => {
    // The pool's one connection is busy for half the deadline, so the claim reaches the server with half its
    // time left: the server's own deadlines must be what is left, not the whole operationTimeoutMs.
    const busy = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    busy.on('error', () => {});
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    const { processed, deliver } = receiverOn(
      new PostgresDedupeStore({ pool: busy, table, operationTimeoutMs: DEADLINE_MS }),
    );
    const event = createEvent('message.delivered');
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      const held = await busy.connect();
      // Deadlines are read from performance.now(): with that clock the test's (timers stay real), half the
      // deadline passes while the claim waits for the connection, exactly, however busy the machine.
      vi.useFakeTimers({ toFake: ['performance'] });
      let first: Awaited<ReturnType<typeof deliver>>;
      try {
        const answered = deliver(event);
        await until(() => busy.waitingCount === 1, { what: 'the claim waiting for the busy connection' });
        vi.advanceTimersByTime(DEADLINE_MS / 2);
        held.release();
        first = await answered;
      } finally {
        vi.useRealTimers();
      }
      expect([first.status, first.reason]).toEqual([503, 'store_unavailable']);
    } finally {
      await locker.query('ROLLBACK');
    }
    try {
      // Whatever the server still ran of that claim has ended (committed or rolled back) before the retry.
      await until(async () => {
        const { rows } = await locker.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state <> 'idle' AND query LIKE $1",
          [`%${table}%`],
        );
        return rows[0]?.n === 0;
      }, 5000);
      // A lease left by the first claim answers 409; a retry the loaded machine made miss the 300 ms deadline
      // answers 503 and is sent again, as the service would.
      let retry = await deliver(event);
      for (let attempt = 1; attempt < 5 && retry.reason === 'store_unavailable'; attempt++)
        retry = await deliver(event);
      expect([retry.status, retry.reason]).toEqual([200, undefined]);
      expect(processed).toEqual([event.id]);
    } finally {
      await locker.end();
      await busy.end();
    }
  });

  it('a transactional completion on a locked row rejects at the deadline and commits nothing', async () => {
    const transactional = new PostgresDedupeStore({
      pool,
      table,
      transactional: true,
      operationTimeoutMs: DEADLINE_MS,
    });
    const claim = await store.claim('live:evt_tx_locked', 60_000);
    const token = (claim as { token: string }).token;
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${table}" WHERE key = $1 FOR UPDATE`, ['live:evt_tx_locked']);
      await rejectsInTime(
        transactional.transact?.('live:evt_tx_locked', token, 60_000, async () => 'ran') as Promise<string>,
      );
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    expect(await store.complete('live:evt_tx_locked', token, 60_000)).toBe(true);
  });

  it('a server that accepts and never answers: rejects at the deadline, without the password', async () => {
    const server = await silentServer();
    const hung = new pg.Pool({
      connectionString: `postgres://postgres:pw-${randomUUID()}@127.0.0.1:${server.port}/test`,
    });
    hung.on('error', () => {});
    try {
      const silent = new PostgresDedupeStore({ pool: hung, operationTimeoutMs: DEADLINE_MS });
      const error = await rejectsInTime(silent.claim('live:evt_silent', 60_000));
      expect(error.message).toContain('PostgreSQL store');
      expect(error.message).not.toContain('pw-');
    } finally {
      await server.close();
      await hung.end();
    }
  });
});

describe('Redis store deadlines', () => {
  // The test's own redis-server: pausing the shared one would stall everyone else's tests.
  let server: RedisServer;
  let paused: ReturnType<typeof createClient>;
  const client = createClient();

  beforeAll(async () => {
    server = await ownRedisServer();
    paused = createClient({ url: server.url });
    paused.on('error', () => {});
  });
  afterAll(async () => {
    paused?.destroy();
    await server?.remove();
  });

  it('validates operationTimeoutMs', () => {
    expect(() => new RedisDedupeStore({ client, operationTimeoutMs: 0 })).toThrow(/operationTimeoutMs/);
    expect(new RedisDedupeStore({ client }).operationTimeoutMs).toBe(3000);
  });

  it('a claim answered 503 while the server held it, executed later, leaves no lease: the retry runs', async () => {
    const client = createClient({ url: server.url });
    client.on('error', () => {});
    await client.connect();
    const controller = createClient({ url: server.url });
    controller.on('error', () => {});
    await controller.connect();
    const store = new RedisDedupeStore({ client, operationTimeoutMs: DEADLINE_MS });
    const { processed, deliver } = receiverOn(store);
    const event = createEvent('message.delivered');
    try {
      // The scripts are cached first: a NOSCRIPT answer after the pause is not this test's subject.
      const warm = await store.claim('live:evt_warm', 1000);
      await store.release('live:evt_warm', (warm as { token: string }).token);
      // Writes (scripts included) wait until CLIENT UNPAUSE; the claim is on the wire when its deadline passes.
      await controller.sendCommand(['CLIENT', 'PAUSE', '30000', 'WRITE']);
      const first = await deliver(event);
      expect([first.status, first.reason]).toEqual([503, 'store_unavailable']);
      await controller.sendCommand(['CLIENT', 'UNPAUSE']);
      // Answered once everything sent before it on this connection ran: the late claim, and what followed it.
      await client.sendCommand(['PING']);
      // A lease left by the first claim answers 409; a retry the loaded machine made miss the 300 ms deadline
      // answers 503 and is sent again, as the service would.
      let retry = await deliver(event);
      for (let attempt = 1; attempt < 5 && retry.reason === 'store_unavailable'; attempt++)
        retry = await deliver(event);
      expect([retry.status, retry.reason]).toEqual([200, undefined]);
      expect(processed).toEqual([event.id]);
    } finally {
      await controller.sendCommand(['CLIENT', 'UNPAUSE']);
      controller.destroy();
      client.destroy();
    }
  });

  it('a claim, its completion and its release share one operationTimeoutMs: a request waits on the store that long', async () => {
    const client = createClient({ url: server.url });
    client.on('error', () => {});
    await client.connect();
    const controller = createClient({ url: server.url });
    controller.on('error', () => {});
    await controller.connect();
    const deadlineMs = 1500;
    const store = new RedisDedupeStore({ client, operationTimeoutMs: deadlineMs });
    try {
      const warm = await store.claim('live:evt_budget_warm', 1000);
      await store.release('live:evt_budget_warm', (warm as { token: string }).token);
      const started = performance.now();
      // A slow claim (the server holds writes 900 ms) still succeeds; then the server stops answering writes.
      await controller.sendCommand(['CLIENT', 'PAUSE', '900', 'WRITE']);
      const claim = await store.claim('live:evt_budget', 60_000);
      expect(claim.status).toBe('claimed');
      const token = (claim as { token: string }).token;
      await controller.sendCommand(['CLIENT', 'PAUSE', '30000', 'WRITE']);
      await expect(store.complete('live:evt_budget', token, 60_000)).rejects.toThrow(/operationTimeoutMs/);
      await expect(store.release('live:evt_budget', token)).rejects.toThrow(/used up its 1500 ms/);
      // Three calls of 1500 ms each would be 3.9 s here.
      expect(performance.now() - started).toBeLessThan(deadlineMs + 700);
    } finally {
      await controller.sendCommand(['CLIENT', 'UNPAUSE']);
      controller.destroy();
      client.destroy();
    }
  });

  it('a paused server: every operation rejects at the deadline, then works again', async () => {
    const store = new RedisDedupeStore({ client: paused, operationTimeoutMs: DEADLINE_MS });
    // An ioredis client has no per-command timeout: only the store's own deadline bounds it.
    const io = new Redis(server.url);
    io.on('error', () => {});
    const viaCall = new RedisDedupeStore({ client: io, operationTimeoutMs: DEADLINE_MS });
    await paused.connect();
    await until(() => io.status === 'ready', { what: 'the ioredis client to be ready' });
    const controller = createClient({ url: server.url });
    controller.on('error', () => {});
    await controller.connect();
    try {
      const claim = await store.claim('live:evt_paused', 60_000);
      const token = (claim as { token: string }).token;
      await controller.sendCommand(['CLIENT', 'PAUSE', '1500', 'ALL']);
      await rejectsInTime(store.claim('live:evt_paused_2', 60_000));
      await rejectsInTime(store.renew('live:evt_paused', token, 60_000));
      await rejectsInTime(viaCall.complete('live:evt_paused', token, 60_000));
      // Once the pause is over the store answers again. The commands sent before their deadlines passed
      // land then: a late claim is dropped by the release sent after it, a late completion marks the event
      // processed (a retry gets a duplicate). Nothing is lost, nothing runs twice.
      const patient = new RedisDedupeStore({ client: paused });
      expect((await patient.claim('live:evt_after_pause', 60_000)).status).toBe('claimed');
    } finally {
      controller.destroy();
      io.disconnect();
    }
  });
});
