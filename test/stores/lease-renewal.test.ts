import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { expectQueuedEventRunsOnce, expectSlowHandlerRunsOnce } from '../support/lease-proof.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// A renewal is due at half the lease, on a tick every quarter: 2 s leaves at least half a second for its round
// trip to the store, which a machine loaded with other suites has been seen to need.
const LEASE_MS = 2000;
const prefix = `mw-test:${randomUUID()}:`;
const table = `mw_lease_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const client = createClient({ url: REDIS_URL });
client.on('error', () => {});
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
pool.on('error', () => {});

beforeAll(async () => {
  await client.connect();
  await new PostgresDedupeStore({ pool, table }).migrate();
});

afterAll(async () => {
  await deleteKeys(client, `${prefix}*`);
  client.destroy();
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
});

// The lease is renewed on the store's own clock while the event waits or runs: a handler three leases long,
// or three leases spent in the queue, and the service's retries all along, still run the event once.
const stores = {
  redis: () => new RedisDedupeStore({ client, prefix }),
  postgres: () => new PostgresDedupeStore({ pool, table }),
  'postgres transactional': () => new PostgresDedupeStore({ pool, table, transactional: true }),
};

for (const [name, store] of Object.entries(stores)) {
  describe(`lease renewal, ${name}`, () => {
    it('a handler three times longer than the lease runs once while retries arrive', async () => {
      await expectSlowHandlerRunsOnce(store(), LEASE_MS);
    });

    it('an event waiting in the queue past its lease is not claimed again by a retry', async () => {
      await expectQueuedEventRunsOnce(store(), LEASE_MS);
    });
  });
}
