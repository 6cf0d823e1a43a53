import { createNodeRedisClient } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqDeadLetters, bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { bullmqJobId } from '../../src/durable/bullmq/queue.js';
import { createReceiver } from '../../src/index.js';
import { testRun } from '../support/harness/cluster.js';
import {
  type ClusterTopology,
  cli,
  type SentinelTopology,
  startClusterTopology,
  startSentinelTopology,
} from '../support/topologies/redis.js';
import { deliveredEvent, delivery, expectAccepted, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';
import { describeDurableQueue } from './queue-conformance.js';

/*
 * BullMQ on ioredis clients of replicated Redis: a Cluster (three masters with a replica each) through an ioredis
 * Cluster client, the one connection BullMQ runs on a Cluster, with a hash-tagged prefix (every key of a queue
 * must hash to one slot); and a primary with a replica and three sentinels through an ioredis client created with
 * `sentinels`, with waitForReplicas. Each runs the queue conformance suite; the dead-letter tools run on the Cluster.
 */
const { run } = testRun();
const prefix = `{mw-${run}}`;
let topology: ClusterTopology;
let sentinel: SentinelTopology;
const connections: (Cluster | Redis)[] = [];
let queues = 0;

beforeAll(async () => {
  [topology, sentinel] = await Promise.all([startClusterTopology(), startSentinelTopology(1)]);
}, 60_000);

afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  await Promise.all([topology?.stop(), sentinel?.stop()]);
});

/** A new ioredis client that finds the primary through the sentinels. */
function sentinelConnection(): Redis {
  const connection = new Redis({
    sentinels: sentinel.sentinelRootNodes,
    name: sentinel.name,
    maxRetriesPerRequest: null,
  });
  connection.on('error', () => {});
  connections.push(connection);
  return connection;
}

/** A new ioredis Cluster client on the topology: BullMQ's queue and worker each take their own. */
function clusterConnection(): Cluster {
  const connection = new Cluster(
    topology.masters.map((node) => ({ host: '127.0.0.1', port: node.port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  );
  connection.on('error', () => {});
  connections.push(connection);
  return connection;
}

describeDurableQueue('BullMQ on an ioredis Cluster, waitForReplicas 1', {
  queue: (attempts) =>
    bullmqQueue({
      connection: clusterConnection(),
      prefix,
      name: `q${++queues}`,
      attempts,
      backoffMs: 50,
      countsIntervalMs: 100,
      waitForReplicas: { count: 1, timeoutMs: 2000 },
      // The persistence check reads one node's settings; it has its own test. The answers every engine can give
      // to a redelivery.
      allowVolatileRedis: true,
      tellDuplicates: true,
    }),
  worker: (receiver, queue, concurrency, options) =>
    createBullmqWorker({ receiver, queue, concurrency, ...options }),
  // Nothing listens on port 1: the client keeps reconnecting, so the enqueue deadline answers.
  unreachable: () => {
    const client = createClient({ url: 'redis://127.0.0.1:1' });
    client.on('error', () => {});
    return bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix,
      name: 'down',
      allowVolatileRedis: true,
    });
  },
  cleanup: async () => {},
});

describeDurableQueue('BullMQ on an ioredis Sentinel client, waitForReplicas 1', {
  queue: (attempts) =>
    bullmqQueue({
      connection: sentinelConnection(),
      prefix,
      name: `s${++queues}`,
      attempts,
      backoffMs: 50,
      countsIntervalMs: 100,
      waitForReplicas: { count: 1, timeoutMs: 2000 },
      tellDuplicates: true,
    }),
  worker: (receiver, queue, concurrency, options) =>
    createBullmqWorker({ receiver, queue, concurrency, ...options }),
  unreachable: () => {
    const client = createClient({ url: 'redis://127.0.0.1:1' });
    client.on('error', () => {});
    return bullmqQueue({
      connection: createNodeRedisClient(client),
      prefix,
      name: 'down',
      allowVolatileRedis: true,
    });
  },
  cleanup: async () => {},
});

describe('BullMQ dead letters on an ioredis Cluster', () => {
  it('lists a dead-lettered job and replays it, and takes the default {bull} prefix without one given', async () => {
    const queue = bullmqQueue({
      connection: clusterConnection(),
      prefix,
      name: 'dead',
      attempts: 1,
      // No allowVolatileRedis: the persistence check passes on the topology's append-only nodes.
    });
    const receiver = createReceiver({ secrets: SECRET, queue });
    let failing = true;
    let ran = 0;
    receiver.on('message.delivered', () => {
      ran++;
      if (failing) throw new Error('the CRM is down');
    });
    const event = deliveredEvent();
    try {
      expectAccepted(await receiver.receive(delivery(event)), 202);
      const worker = await createBullmqWorker({ receiver, queue });
      await until(() => worker.counters().deadLettered === 1);
      const deadLetters = bullmqDeadLetters({ connection: clusterConnection(), prefix, name: 'dead' });
      const listed = await deadLetters.list();
      expect(listed.map((letter) => letter.id)).toEqual([event.id]);
      failing = false;
      expect(await deadLetters.replay([event.id])).toEqual({ replayed: [event.id], skipped: [] });
      await until(() => worker.counters().completed === 1);
      expect(ran).toBe(2);
      await worker.close();
      await deadLetters.close();
    } finally {
      await receiver.close();
      await queue.close();
    }
    const defaulted = bullmqQueue({
      connection: clusterConnection(),
      name: 'defaulted',
      allowVolatileRedis: true,
    });
    expect(defaulted.queue.opts.prefix).toBe('{bull}');
    await defaulted.close();
  });
});

describe('BullMQ waitForReplicas on an ioredis Cluster', () => {
  it("answers 202 once the replica of the queue slot's master holds the job", async () => {
    const queue = bullmqQueue({
      connection: clusterConnection(),
      prefix,
      name: 'replicated',
      waitForReplicas: { count: 1, timeoutMs: 2000 },
    });
    const receiver = createReceiver({ secrets: SECRET, queue });
    const master = await topology.masterOf(prefix);
    const port = (await cli(master.port, 'INFO', 'replication')).match(/slave0:ip=[^,]+,port=(\d+)/)?.[1];
    const replica = new Redis(Number(port), '127.0.0.1', { readOnly: true });
    replica.on('error', () => {});
    connections.push(replica);
    try {
      for (let i = 0; i < 3; i++) {
        const event = deliveredEvent();
        expectAccepted(await receiver.receive(delivery(event)), 202);
        // WAIT ran on the connection that added the job: the replica holds it already, with no wait of ours.
        expect(await replica.call('EXISTS', `${prefix}:replicated:${bullmqJobId(`live:${event.id}`)}`)).toBe(
          1,
        );
      }
    } finally {
      await receiver.close();
      await queue.close();
    }
  });
});
