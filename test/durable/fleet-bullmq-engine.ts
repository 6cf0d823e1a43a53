import { createNodeRedisClient, Queue } from 'bullmq';
import { createClient } from 'redis';
import { REDIS_URL } from '../support/harness/cluster.js';
import type { FleetEngine } from './fleet.js';

/** The fleet on BullMQ: one queue under the run's own prefix, whose keys the fleet deletes. */
export function bullmqFleet(): FleetEngine {
  let queue: Queue | undefined;
  return {
    name: 'bullmq',
    backoffMs: 100,
    config: (run) => ({ name: 'fleet', prefix: `mw-test:${run}:bull` }),
    probe(run) {
      const probed = new Queue('fleet', {
        connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
        prefix: `mw-test:${run}:bull`,
      });
      queue = probed;
      return {
        async unsettled() {
          const counts = await probed.getJobCounts('wait', 'prioritized', 'delayed', 'active');
          return Object.values(counts).reduce((sum, n) => sum + n, 0);
        },
        jobs: () => probed.getJobCountByTypes('completed', 'failed'),
        async deadLettered() {
          return (await probed.getFailed(0, -1)).map((job) => job.data.event.id as string);
        },
      };
    },
    cleanup: async () => {
      await queue?.close();
    },
  };
}
