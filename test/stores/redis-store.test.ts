import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOpen } from '../../src/stores/fail-open.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import { freePort } from '../support/free-port.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { describeStoreConformance } from './store-conformance.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `mw-test:${randomUUID()}:`;
const client = createClient({ url: REDIS_URL });
client.on('error', () => {});

beforeAll(async () => {
  await client.connect();
});

afterAll(async () => {
  await deleteKeys(client, `${prefix}*`);
  client.destroy();
});

describeStoreConformance('redis', () => ({
  store: new RedisDedupeStore({ client, prefix }),
  leaseMs: 200,
  slackMs: 60,
  advance: sleep,
}));

describeStoreConformance('failOpen(redis)', () => ({
  store: failOpen(new RedisDedupeStore({ client, prefix })),
  leaseMs: 200,
  slackMs: 60,
  advance: sleep,
}));

describe('RedisDedupeStore', () => {
  it('keeps a completion under the prefix with the retention as its TTL', async () => {
    const store = new RedisDedupeStore({ client, prefix });
    const claim = await store.claim('live:evt_ttl', 1000);
    expect(claim.status).toBe('claimed');
    await store.complete('live:evt_ttl', (claim as { token: string }).token, 3_600_000);
    expect(await client.get(`${prefix}live:evt_ttl`)).toBe('done');
    const ttl = await client.pTTL(`${prefix}live:evt_ttl`);
    expect(ttl).toBeGreaterThan(3_590_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('uses one round trip per operation once the server knows the scripts', async () => {
    let sent = 0;
    const counting = {
      get isReady() {
        return client.isReady;
      },
      sendCommand(args: ReadonlyArray<string>) {
        sent++;
        return client.sendCommand(args);
      },
    };
    const store = new RedisDedupeStore({ client: counting, prefix });
    await store.claim('live:evt_warm', 1000);
    sent = 0;
    const claim = await store.claim('live:evt_rt', 1000);
    expect(sent).toBe(1);
    await store.complete('live:evt_rt', (claim as { token: string }).token, 60_000);
    expect(sent).toBe(2);
  });

  it('throws at once instead of queueing while the client is not connected', async () => {
    // Nothing listens there: the client is refused and keeps reconnecting.
    const port = await freePort();
    const offline = createClient({ url: `redis://127.0.0.1:${port}` });
    const errors: unknown[] = [];
    offline.on('error', (error) => errors.push(error));
    const connecting = offline.connect().catch(() => {});
    try {
      const store = new RedisDedupeStore({ client: offline });
      const started = Date.now();
      await expect(store.claim('live:evt_offline', 1000)).rejects.toThrow(/not connected/);
      await expect(store.complete('live:evt_offline', 'token', 1000)).rejects.toThrow(/not connected/);
      // Queued commands would wait for the 3 s operation deadline; these fail long before it.
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      offline.destroy();
      await connecting;
    }
  });

  it('throws at once while an ioredis client is not ready, sending nothing', async () => {
    const unconnected = new Redis(REDIS_URL, { lazyConnect: true });
    let calls = 0;
    const call = unconnected.call.bind(unconnected);
    unconnected.call = ((...args: Parameters<typeof call>) => {
      calls++;
      return call(...args);
    }) as typeof call;
    await expect(new RedisDedupeStore({ client: unconnected }).claim('live:evt_x', 1000)).rejects.toThrow(
      /not connected/,
    );
    expect(calls).toBe(0);
    unconnected.disconnect();
  });

  it('rejects a missing client with a message that says what to pass', () => {
    // @ts-expect-error: the client is required
    expect(() => new RedisDedupeStore({})).toThrow(/createClient/);
  });
});
