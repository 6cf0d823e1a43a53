import { beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { runFleet } from './fleet.js';
import { bullmqFleet } from './fleet-bullmq-engine.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

it('BullMQ fleet: 2 receivers, 3 workers, one of each SIGKILLed: no event lost, dead-letter exact', async () => {
  const result = await runFleet(bullmqFleet());
  console.log(`BullMQ fleet: ${JSON.stringify(result)}`);
  expect(result.tally.network).toBeGreaterThan(0);
}, 240_000);
