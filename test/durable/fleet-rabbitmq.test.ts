import { beforeAll, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { ownRabbitmqNode } from '../support/topologies/rabbitmq.js';
import { runFleet } from './fleet.js';
import { brokerFleet } from './fleet-broker-engine.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

it.skipIf(process.env.CI_REPEAT_RUN === '1')(
  'RabbitMQ fleet: 2 receivers, 3 workers, one of each SIGKILLed, RabbitMQ restarted: no event lost, dead-letter exact',
  async () => {
    const node = await ownRabbitmqNode();
    try {
      const fleet = brokerFleet('rabbitmq', async () => {}, node.url);
      fleet.restartBroker = async () => {
        await node.stop();
        await node.start();
      };
      const result = await runFleet(fleet);
      console.log(`RabbitMQ fleet: ${JSON.stringify(result)}`);
      expect(result.tally.network).toBeGreaterThan(0);
    } finally {
      await node.remove();
    }
  },
  300_000,
);
