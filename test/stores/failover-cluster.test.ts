import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisDedupeStore, type WaitForReplicas } from '../../src/stores/redis.js';
import { testRun } from '../support/harness/cluster.js';
import { deliverAll, eventIds } from '../support/harness/sender.js';
import {
  acknowledgedIds,
  countingReceiver,
  deliverThroughKill,
  fleetDeliveries,
  haSettings,
  serve,
} from '../support/topologies/failover-run.js';
import { type ClusterTopology, cli, startClusterTopology } from '../support/topologies/redis.js';
import { until } from '../support/until.js';

/*
 * The Redis store on a Redis Cluster (three masters with a replica each), node-redis createCluster clients,
 * waitForReplicas { count: 1 }: two receivers take 60 events and 20 copies, 8 at a time, and the master of the
 * first event's slot is SIGKILLed once 40% were acknowledged; its replica takes over its slots. Counted: completions acknowledged (200) and then lost (a redelivery runs
 * the event again: must be 0), events run twice (reported), failed requests and the seconds to recover.
 */
const { run, secret } = testRun();
const settings = haSettings();
const prefix = `mw-ha:${run}:`;
let topology: ClusterTopology;
const clients: { destroy(): unknown }[] = [];

beforeAll(async () => {
  topology = await startClusterTopology();
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.destroy()));
  await topology?.stop();
});

/** A node-redis Cluster client, or with MW_HA_IOREDIS=1 (bench/failover.mjs) an ioredis one. */
async function clusterClient() {
  if (process.env.MW_HA_IOREDIS === '1') {
    const client = new Cluster(topology.masters.map((node) => ({ host: '127.0.0.1', port: node.port })));
    client.on('error', () => {});
    clients.push({ destroy: () => client.disconnect() });
    await until(() => client.status === 'ready', { what: 'the ioredis Cluster client to be ready' });
    return client;
  }
  const client = createCluster({ rootNodes: topology.rootNodes });
  client.on('error', () => {});
  clients.push(client);
  await client.connect();
  return client;
}

/** A receiver on the store that counts the runs of each event and what onError heard. */
async function receiverOn(waitForReplicas: WaitForReplicas | undefined) {
  const store = new RedisDedupeStore({
    client: await clusterClient(),
    prefix,
    ...(waitForReplicas ? { waitForReplicas } : {}),
  });
  return countingReceiver(store, secret);
}

it(
  'a master SIGKILLed at 40%: 0 acknowledged completions lost, the fleet back within seconds',
  async () => {
    const instances = await Promise.all(
      [1, 2].map(() =>
        receiverOn(settings.replicas > 0 ? { count: settings.replicas, timeoutMs: 500 } : undefined),
      ),
    );
    const servers = await Promise.all(instances.map((instance) => serve(instance.receiver)));
    const ids = eventIds(run, settings.events);
    const victim = await topology.masterOf(`${prefix}live:${ids[0]}`);
    // With waitForReplicas, the victim's slots need a replica left after its failover (count + 1 replicas):
    // else no completion there is acknowledged until the old master is back as a replica.
    if (settings.replicas > 0) await topology.addReplica(victim);
    try {
      const result = await deliverThroughKill(
        fleetDeliveries(
          ids,
          settings.copies,
          servers.map((server) => server.url),
        ),
        {
          secret,
          concurrency: settings.concurrency,
          killAt: 0.4,
          kill: () => victim.kill(),
          deadlineMs: settings.deadlineMs,
        },
      );
      expect(acknowledgedIds(result.attempts)).toEqual(new Set(ids));
      const runsOf = (id: string) => instances.reduce((sum, each) => sum + (each.runs.get(id) ?? 0), 0);
      const doubles = ids.filter((id) => runsOf(id) > 1).length;
      const runsBefore = new Map(ids.map((id) => [id, runsOf(id)]));

      // The old master comes back as a replica of its promoted one, which resyncs it. Then every event is
      // delivered again: one whose completion was lost runs again.
      await victim.start();
      await until(async () => /role:slave/.test(await cli(victim.port, 'INFO', 'replication')), {
        what: 'the old master to rejoin as a replica',
      });
      const again = await deliverAll(
        ids.map((eventId) => ({ eventId, target: () => servers[0]?.url as string })),
        { secret, concurrency: 8, deadline: Date.now() + 30_000 },
      );
      expect(acknowledgedIds(again)).toEqual(new Set(ids));
      const lost = ids.filter((id) => runsOf(id) > (runsBefore.get(id) ?? 0));
      console.info(
        `Cluster${process.env.MW_HA_IOREDIS === '1' ? ' (ioredis)' : ''}, waitForReplicas ${settings.replicas}: lost ${lost.length}, run twice ${doubles}, failed requests ${result.failed}, ` +
          `recovered in ${result.recoverySeconds.toFixed(1)} s`,
        result.tally,
      );
      if (settings.safe) expect(lost, 'completions acknowledged and then lost').toEqual([]);
      expect(result.failed).toBeGreaterThan(0);
      expect(result.recoverySeconds).toBeLessThan(60);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  },
  settings.deadlineMs + 15_000,
);
