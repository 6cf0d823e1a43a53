import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDedupeStore } from '../../src/stores/redis.js';
import {
  type ClusterTopology,
  cli,
  type SentinelTopology,
  startClusterTopology,
  startSentinelTopology,
} from '../support/topologies/redis.js';
import { until } from '../support/until.js';
import { describeStoreConformance } from './store-conformance.js';

/*
 * The Redis store on ioredis itself, the client BullMQ users already have: a plain client on the shared Redis,
 * a Sentinel client (`new Redis({ sentinels, name })`) on a primary with one replica and three sentinels, and a
 * Cluster client (`new Cluster(nodes)`) on three masters with a replica each. Each runs the store conformance
 * suite, the receiver over the store included.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `mw-test:${randomUUID()}:io:`;
const clients: (Redis | Cluster)[] = [];
let sentinel: SentinelTopology;
let cluster: ClusterTopology;

/** A client of ours, connected: the suites' stores share it. */
async function ready<C extends Redis | Cluster>(client: C): Promise<C> {
  client.on('error', () => {});
  clients.push(client);
  await until(() => client.status === 'ready', { what: 'the ioredis client to be ready', timeoutMs: 20_000 });
  return client;
}

let plain: Redis;
let viaSentinels: Redis;
let clustered: Cluster;

beforeAll(async () => {
  [sentinel, cluster] = await Promise.all([startSentinelTopology(1), startClusterTopology()]);
  plain = await ready(new Redis(REDIS_URL));
  viaSentinels = await ready(
    new Redis({ sentinels: sentinel.sentinelRootNodes, name: sentinel.name, maxRetriesPerRequest: 2 }),
  );
  clustered = await ready(
    new Cluster(
      cluster.masters.map((node) => ({ host: '127.0.0.1', port: node.port })),
      { redisOptions: { maxRetriesPerRequest: 2 } },
    ),
  );
}, 120_000);

afterAll(async () => {
  // The shared server keeps nothing of this run; the topologies go whole.
  if (plain) {
    const stream = plain.scanStream({ match: `${prefix}*`, count: 1000 });
    for await (const keys of stream as AsyncIterable<string[]>) if (keys.length > 0) await plain.del(...keys);
  }
  for (const client of clients) client.disconnect();
  await Promise.all([sentinel?.stop(), cluster?.stop()]);
});

const target =
  (client: () => Redis | Cluster, waitForReplicas?: { count: number; timeoutMs: number }) => () => ({
    store: new RedisDedupeStore({
      client: client(),
      prefix,
      ...(waitForReplicas ? { waitForReplicas } : {}),
    }),
    leaseMs: 200,
    slackMs: 60,
    advance: sleep,
  });

describeStoreConformance(
  'redis on an ioredis client',
  target(() => plain),
);
describeStoreConformance(
  'redis on an ioredis Sentinel client, waitForReplicas 1',
  target(() => viaSentinels, { count: 1, timeoutMs: 2000 }),
);
describeStoreConformance(
  'redis on an ioredis Cluster client, waitForReplicas 1',
  target(() => clustered, { count: 1, timeoutMs: 2000 }),
);

describe('RedisDedupeStore on real ioredis clients', () => {
  it('keeps each key on the master of its slot in a Cluster, and waits for the Sentinel primary’s replica', async () => {
    const onCluster = new RedisDedupeStore({ client: clustered, prefix });
    const keys = ['live:evt_io_a', 'live:evt_io_b', 'live:evt_io_c', 'live:evt_io_d'];
    for (const key of keys) {
      const claim = await onCluster.claim(key, 1000);
      await onCluster.complete(key, (claim as { token: string }).token, 60_000);
      const master = await cluster.masterOf(`${prefix}${key}`);
      const direct = await ready(new Redis(master.port, '127.0.0.1'));
      expect(await direct.get(`${prefix}${key}`)).toBe('done');
    }
    const replicated = new RedisDedupeStore({
      client: viaSentinels,
      prefix,
      waitForReplicas: { count: 1, timeoutMs: 2000 },
    });
    const claim = await replicated.claim('live:evt_io_replicated', 1000);
    await replicated.complete('live:evt_io_replicated', (claim as { token: string }).token, 60_000);
    const replica = sentinel.replicas[0];
    expect(replica).toBeDefined();
    const onReplica = await ready(new Redis(replica?.port as number, '127.0.0.1'));
    // Acknowledged after WAIT: the replica holds the completion already, with no wait of ours.
    expect(await onReplica.get(`${prefix}live:evt_io_replicated`)).toBe('done');
  });

  it("waits on an ioredis Cluster for the replica of the key's master", async () => {
    const replicated = new RedisDedupeStore({
      client: clustered,
      prefix,
      waitForReplicas: { count: 1, timeoutMs: 2000 },
    });
    for (const key of ['live:evt_io_w1', 'live:evt_io_w2', 'live:evt_io_w3']) {
      const claim = await replicated.claim(key, 1000);
      await replicated.complete(key, (claim as { token: string }).token, 60_000);
      const master = await cluster.masterOf(`${prefix}${key}`);
      const port = (await cli(master.port, 'INFO', 'replication')).match(/slave0:ip=[^,]+,port=(\d+)/)?.[1];
      const onReplica = await ready(new Redis(Number(port), '127.0.0.1', { readOnly: true }));
      // Acknowledged after WAIT on that master's connection: its replica holds the completion already.
      expect(await onReplica.call('GET', `${prefix}${key}`)).toBe('done');
    }
  });
});
