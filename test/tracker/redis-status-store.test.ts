import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { RedisStatusStore } from '../../src/tracker/redis-store.js';
import { REDIS_URL } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { describeStatusStoreConformance } from './status-store-conformance.js';

const prefix = `mw-test:${randomUUID()}:status:`;
const client = createClient({ url: REDIS_URL });
client.on('error', () => {});
const io = new Redis(REDIS_URL, { lazyConnect: true });
io.on('error', () => {});

beforeAll(async () => {
  await Promise.all([client.connect(), io.connect()]);
});

afterAll(async () => {
  await deleteKeys(client, `${prefix}*`);
  client.destroy();
  io.disconnect();
});

// One process on node-redis, the other on ioredis: the same keys through either client.
describeStatusStoreConformance('redis', () => ({
  stores: [new RedisStatusStore({ client, prefix }), new RedisStatusStore({ client: io, prefix })],
  shortLived: new RedisStatusStore({ client, prefix, retentionMs: 300 }),
  retentionMs: 300,
}));
