import { createNodeRedisClient, Queue } from 'bullmq';
import { createClient } from 'redis';
import { beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { REDIS_URL } from '../support/harness/cluster.js';
import { runFleet } from './fleet.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

it('BullMQ fleet: 2 receivers, 3 workers, one of each SIGKILLed: no event lost, dead-letter exact', async () => {
  let queue: Queue | undefined;
  const result = await runFleet({
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
    // The run's keys (its prefix included) are deleted by the fleet.
    cleanup: async () => {
      await queue?.close();
    },
  });
  console.log(`BullMQ fleet: ${JSON.stringify(result)}`);
  expect(result.tally.network).toBeGreaterThan(0);
}, 240_000);
