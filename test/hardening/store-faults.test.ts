import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import { createEvent } from '../../src/testing.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { silentServer } from '../support/harness/silent-server.js';
import { sign } from '../support/independent-signing.js';
import { startTarget, type Target } from './targets.js';

/*
 * The store fails under live traffic through a real server: every delivery is answered 503 store_unavailable
 * with Retry-After within the store's deadline, and once the store is back the service's retries process
 * every event, none lost and none run twice after a 200.
 */
const DEADLINE_MS = 300;
const LATE_MS = DEADLINE_MS + 1500;

async function deliver(target: Target, event: object) {
  const body = JSON.stringify(event);
  const started = performance.now();
  const response = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-signature': sign(body) },
    body,
  });
  const reason = ((await response.json()) as { error?: { code: string } }).error?.code;
  return {
    status: response.status,
    reason,
    retryAfter: Number(response.headers.get('retry-after')),
    ms: performance.now() - started,
  };
}

describe('PostgreSQL faults under traffic', () => {
  const table = `mw_hardening_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  const store = new PostgresDedupeStore({ pool, table, operationTimeoutMs: DEADLINE_MS });
  let target: Target;

  beforeAll(async () => {
    await store.migrate();
    target = await startTarget('node:http', { store, leaseMs: 1000, retryAfterSeconds: 1 });
  });
  afterAll(async () => {
    await target?.close();
    await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  });

  it('the inbox table locked: 503 store_unavailable within the deadline; processed once after', async () => {
    const event = createEvent('message.delivered');
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      const answer = await deliver(target, event);
      expect(answer).toMatchObject({ status: 503, reason: 'store_unavailable' });
      expect(answer.retryAfter).toBeGreaterThan(0);
      expect(answer.ms).toBeLessThan(LATE_MS);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    // The service's retries, honouring Retry-After: a claim that landed after its deadline holds the event
    // only until its lease expires.
    expect((await deliverUntilAccepted(target, event)).status).toBe(200);
    expect((await target.handled()).filter((id) => id === event.id)).toHaveLength(1);
  });

  it('a server that accepts and never answers: 503 store_unavailable within the deadline', async () => {
    const server = await silentServer();
    const hung = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${server.port}/test` });
    hung.on('error', () => {});
    const silentTarget = await startTarget('node:http', {
      store: new PostgresDedupeStore({ pool: hung, operationTimeoutMs: DEADLINE_MS }),
    });
    try {
      const answers = await Promise.all(
        [1, 2, 3].map(() => deliver(silentTarget, createEvent('message.delivered'))),
      );
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, reason: 'store_unavailable' });
        expect(answer.ms).toBeLessThan(LATE_MS);
      }
      expect(await silentTarget.handled()).toEqual([]);
    } finally {
      await silentTarget.close();
      await server.close();
      await hung.end();
    }
  });
});

describe('Redis killed and restarted mid-traffic', () => {
  let server: RedisServer;
  let client: ReturnType<typeof createClient>;
  let target: Target;

  beforeAll(async () => {
    server = await ownRedisServer();
    client = createClient({ url: server.url, socket: { reconnectStrategy: () => 50 } });
    client.on('error', () => {});
    await client.connect();
    target = await startTarget('node:http', {
      store: new RedisDedupeStore({ client, operationTimeoutMs: DEADLINE_MS }),
      leaseMs: 2000,
      retryAfterSeconds: 1,
    });
  });
  afterAll(async () => {
    await target?.close();
    client?.destroy();
    await server?.remove();
  });

  it('503 while it is down, then every event processed, none run again after its 200', async () => {
    const events = Array.from({ length: 60 }, () => createEvent('message.delivered'));
    const acknowledged = new Set<string>();
    const during: string[] = [];
    for (const [index, event] of events.entries()) {
      if (index === 20) await server.stop();
      if (index === 40) {
        await server.start();
        await new Promise<void>((ready) => (client.isReady ? ready() : client.once('ready', ready)));
      }
      const answer = await deliver(target, event);
      expect(answer.status === 200 || answer.status === 503, JSON.stringify(answer)).toBe(true);
      if (answer.status === 200) acknowledged.add(event.id as string);
      else {
        expect(answer.reason).toBe('store_unavailable');
        expect(answer.ms).toBeLessThan(LATE_MS);
      }
      if (index >= 20 && index < 40) during.push(`${answer.status}`);
    }
    expect(during.every((status) => status === '503')).toBe(true);
    // The service retries what was not acknowledged (and replays some that were), honouring Retry-After.
    const handledBefore = await target.handled();
    const runsBefore = new Map(events.map((event) => [event.id, count(handledBefore, event.id)]));
    for (const event of events) {
      if (acknowledged.has(event.id as string)) continue;
      if ((await deliverUntilAccepted(target, event)).status === 200) acknowledged.add(event.id as string);
    }
    expect(acknowledged.size).toBe(events.length);
    for (const event of events.slice(0, 20)) {
      expect((await deliver(target, event)).status).toBe(200);
      expect(count(await target.handled(), event.id)).toBe(runsBefore.get(event.id));
    }
    const handledAfter = await target.handled();
    for (const event of events) expect(count(handledAfter, event.id)).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

/** Delivers like the service retries: again after each Retry-After, up to 10 attempts. */
async function deliverUntilAccepted(target: Target, event: object) {
  let answer = await deliver(target, event);
  for (let attempt = 1; attempt < 10 && answer.status !== 200; attempt++) {
    await new Promise((wait) => setTimeout(wait, answer.retryAfter * 1000));
    answer = await deliver(target, event);
  }
  return answer;
}

function count(ids: string[], id: string | undefined): number {
  return ids.filter((seen) => seen === id).length;
}
