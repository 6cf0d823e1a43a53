import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { type DedupeStore, failOpen, MemoryDedupeStore } from '../../src/index.js';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import { createEvent } from '../../src/testing.js';
import { recordingReceiver } from '../support/recording-receiver.js';

const secret = 'whsec_fail_open';
// A client that was never connected: every store operation throws at once, as when Redis is down.
const offline = createClient({ url: 'redis://127.0.0.1:1' });
offline.on('error', () => {});
const unreachable = new RedisDedupeStore({ client: offline });

afterAll(() => offline.destroy());

const receiverWith = (store: DedupeStore) => recordingReceiver(store, secret);

describe('store unreachable', () => {
  it('fails closed by default: 503 store_unavailable with Retry-After, nothing processed', async () => {
    const { processed, deliver } = receiverWith(unreachable);
    const outcome = await deliver(createEvent('message.delivered'));
    expect(outcome.status).toBe(503);
    expect(outcome.reason).toBe('store_unavailable');
    expect(Number(outcome.headers['retry-after'])).toBeGreaterThan(0);
    expect(processed).toEqual([]);
  });

  it('failOpen processes the event unguarded and says so; a redelivery then runs again (the risk)', async () => {
    const unavailable: string[] = [];
    const store = failOpen(unreachable, { onUnavailable: (_error, key) => unavailable.push(key) });
    const { processed, deliver } = receiverWith(store);
    const event = createEvent('message.delivered');
    expect((await deliver(event)).status).toBe(200);
    expect((await deliver(event)).status).toBe(200);
    expect(processed).toEqual([event.id, event.id]);
    expect(unavailable).toEqual([`live:${event.id}`, `live:${event.id}`]);
  });

  it('failOpen changes nothing while the store works', async () => {
    const { processed, deliver } = receiverWith(failOpen(new MemoryDedupeStore()));
    const event = createEvent('message.delivered');
    expect((await deliver(event)).status).toBe(200);
    const again = await deliver(event);
    expect(again.status).toBe(200);
    expect(again.duplicate).toBe(true);
    expect(processed).toEqual([event.id]);
  });

  it('failOpen refuses a transactional store', () => {
    const pool = new pg.Pool();
    const store = new PostgresDedupeStore({ pool, transactional: true });
    expect(() => failOpen(store as unknown as DedupeStore)).toThrow(/transactional/);
    return pool.end();
  });
});
