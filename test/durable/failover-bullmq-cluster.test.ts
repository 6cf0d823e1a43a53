import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bullmqDeadLetters } from '../../src/durable/bullmq/index.js';
import { testRun } from '../support/harness/cluster.js';
import { haSettings } from '../support/topologies/failover-run.js';
import { type ClusterTopology, startClusterTopology } from '../support/topologies/redis.js';
import { bullmqFleetThroughKill } from './failover-bullmq-fleet.js';

/*
 * BullMQ on a Redis Cluster (three masters with a replica each, and a second replica for the master of the
 * queue's slot) through ioredis Cluster clients, a hash-tagged prefix and waitForReplicas { count: 1 }: two receivers hand 60 events and 20 copies to the queue, 8 at a time,
 * and two workers run them; the master of the queue's slot is SIGKILLed once 40% were acknowledged and its replica
 * takes over. Counted: events answered 202 whose job no worker ever ran (must be 0), events run twice (reported),
 * failed requests, seconds to recover.
 */
const { run, secret } = testRun();
const settings = haSettings();
const prefix = `{mw-ha-${run}}`;
let topology: ClusterTopology;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  topology = await startClusterTopology();
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => {});
  await topology?.stop();
});

/** A new ioredis Cluster client: BullMQ needs maxRetriesPerRequest null for its workers' blocking reads. */
async function clusterConnection() {
  const connection = new Cluster(
    topology.masters.map((node) => ({ host: '127.0.0.1', port: node.port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  );
  connection.on('error', () => {});
  closing.push(async () => connection.disconnect());
  return connection;
}

it(
  "the master of the queue's slot SIGKILLed at 40%: no job answered 202 is lost, every one runs",
  async () => {
    const victim = await topology.masterOf(prefix);
    // Two replicas, so that the promoted one still has a replica to WAIT for: with one, the new master would
    // refuse every job (whenFewer: 'reject') until the old one rejoined.
    await topology.addReplica(victim);
    const result = await bullmqFleetThroughKill({
      run,
      secret,
      connection: clusterConnection,
      prefix,
      kill: () => victim.kill(),
      closing,
    });
    expect(result.allAcknowledged).toBe(true);
    console.info(
      `BullMQ on Cluster, waitForReplicas ${settings.replicas}: lost ${result.lost.length}, run twice ${result.doubles}, ` +
        `failed requests ${result.failed}, recovered in ${result.recoverySeconds.toFixed(1)} s`,
      result.tally,
    );
    if (settings.safe) expect(result.lost, 'jobs answered 202 that never ran').toEqual([]);
    expect(result.failed).toBeGreaterThan(0);

    // The dead-letter tools reach the promoted master through the Cluster client.
    const deadLetters = bullmqDeadLetters({ connection: await clusterConnection(), prefix });
    closing.push(() => deadLetters.close());
    expect(await deadLetters.count()).toBe(0);
  },
  settings.deadlineMs + 60_000,
);
