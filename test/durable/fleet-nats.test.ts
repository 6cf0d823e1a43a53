import { beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { ownNatsServer } from '../support/topologies/nats.js';
import { runFleet } from './fleet.js';
import { brokerFleet } from './fleet-broker-engine.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

it.skipIf(process.env.CI_REPEAT_RUN === '1')(
  'NATS fleet: 2 receivers, 3 workers, one of each SIGKILLed, NATS restarted: no event lost, dead-letter exact',
  async () => {
    const server = await ownNatsServer();
    try {
      const fleet = brokerFleet('nats', async () => {}, server.url);
      fleet.restartBroker = async () => {
        await server.stop();
        await server.start();
      };
      const result = await runFleet(fleet);
      console.log(`NATS fleet: ${JSON.stringify(result)}`);
      expect(result.tally.network).toBeGreaterThan(0);
    } finally {
      await server.remove();
    }
  },
  300_000,
);
