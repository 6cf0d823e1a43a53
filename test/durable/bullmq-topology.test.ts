import { createNodeRedisClient } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqDeadLetters, bullmqQueue } from '../../src/durable/bullmq/index.js';
import { clusterPrefix } from '../../src/durable/bullmq/redis-topology.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { replicasOnline } from '../support/topologies/redis.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';

/*
 * BullMQ on replicated Redis: a node-redis cluster client is refused at creation (BullMQ's node-redis adapter
 * has no cluster support), a cluster's prefix gets its hash tag, and waitForReplicas answers 202 only once the
 * replicas hold the job (a primary of the test's own with one replica; the same primary alone has none).
 */
describe('BullMQ on a Redis Cluster', () => {
  it('refuses a node-redis createCluster() client at creation, naming what to pass', () => {
    const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] });
    expect(() => bullmqQueue({ connection: cluster as never })).toThrow(WebhookConfigError);
    expect(() => bullmqQueue({ connection: cluster as never })).toThrow(/ioredis Cluster.*'\{bull\}'/);
    expect(() => bullmqDeadLetters({ connection: cluster as never })).toThrow(/createCluster\(\)/);
  });

  it('gives a cluster the {bull} prefix, keeps a hash-tagged one, refuses one without, naming the fix', () => {
    // Never connected: the prefix is settled at creation.
    const ioredisCluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    expect(clusterPrefix('bullmqQueue', ioredisCluster, undefined)).toBe('{bull}');
    expect(clusterPrefix('bullmqQueue', ioredisCluster, '{sms}:jobs')).toBe('{sms}:jobs');
    expect(() => bullmqQueue({ connection: ioredisCluster, prefix: 'sms' })).toThrow(
      /CROSSSLOT.*prefix: '\{sms\}'/,
    );
    expect(() => bullmqDeadLetters({ connection: ioredisCluster, prefix: 'sms' })).toThrow(
      /prefix: '\{sms\}'/,
    );
    const single = new Redis({ lazyConnect: true });
    expect(clusterPrefix('bullmqQueue', single, undefined)).toBeUndefined();
  });
});

describe('bullmqQueue({ waitForReplicas })', () => {
  let primary: RedisServer;
  let replica: RedisServer;

  beforeAll(async () => {
    primary = await ownRedisServer();
    const port = new URL(primary.url).port;
    replica = await ownRedisServer(['--save', '', '--replicaof', '127.0.0.1', port]);
    await replicasOnline({ port: Number(port) }, 1);
  }, 60_000);

  afterAll(async () => {
    await replica?.remove();
    await primary?.remove();
  });

  async function answer(
    url: string,
    waitForReplicas: { count: number; timeoutMs: number; whenFewer?: 'accept' },
  ) {
    const client = createClient({ url });
    client.on('error', () => {});
    const queue = bullmqQueue({
      connection: createNodeRedisClient(client),
      name: 'replicated',
      waitForReplicas,
    });
    const receiver = createReceiver({ secrets: SECRET, queue });
    const heard: string[] = [];
    receiver.onError((error) => {
      heard.push(`${error.code} ${error.message}`);
    });
    try {
      return { outcome: await receiver.receive(delivery(deliveredEvent())), heard };
    } finally {
      await queue.close();
      client.destroy();
    }
  }

  it('answers 202 once the replica holds the job', async () => {
    const { outcome } = await answer(primary.url, { count: 1, timeoutMs: 2000 });
    expect(outcome.status).toBe(202);
  });

  it('answers 503 with Retry-After when fewer replicas hold it; whenFewer accept answers 202 and tells onError', async () => {
    const strict = await answer(primary.url, { count: 2, timeoutMs: 100 });
    expect(strict.outcome.status).toBe(503);
    expect(Number(strict.outcome.headers['retry-after'])).toBeGreaterThan(0);
    expect(strict.heard.join(' ')).toMatch(/queue_unavailable .*only 1 of the 2 replicas/);
    const lenient = await answer(primary.url, { count: 2, timeoutMs: 100, whenFewer: 'accept' });
    expect(lenient.outcome.status).toBe(202);
    expect(lenient.heard.join(' ')).toMatch(/persistence_unchecked .*acknowledged all the same/);
  });

  it('refuses a waitForReplicas that cannot work, with an example', () => {
    const client = createClient({ url: primary.url });
    client.on('error', () => {});
    const connection = createNodeRedisClient(client);
    expect(() => bullmqQueue({ connection, waitForReplicas: { count: 0, timeoutMs: 100 } })).toThrow(
      /count must be a whole number ≥ 1.*Example: waitForReplicas/,
    );
    client.destroy();
  });
});
