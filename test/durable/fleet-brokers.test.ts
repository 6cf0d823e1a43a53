import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import { ownNatsServer } from '../support/topologies/nats.js';
import { ownRabbitmqNode } from '../support/topologies/rabbitmq.js';
import { type FleetEngine, runFleet } from './fleet.js';
import { NATS_URL } from './nats-engine.js';
import { RABBITMQ_URL } from './rabbitmq-engine.js';

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  await buildPackage();
});

/** The broker engines' fleet: the ledger's rows are the jobs, its dead rows the dead letters. */
function brokerFleet(
  name: 'rabbitmq' | 'nats',
  removeQueue: (queue: string) => Promise<void>,
  brokerUrl = name === 'rabbitmq' ? RABBITMQ_URL : NATS_URL,
): FleetEngine {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const table = (run: string) => `mw_fleet_${run}`;
  const queue = (run: string) => `mw-fleet-${run}`;
  return {
    name,
    backoffMs: 500,
    config: (run) => ({
      name: queue(run),
      table: table(run),
      databaseUrl: DATABASE_URL,
      brokerUrl,
    }),
    probe(run) {
      const rows = async (where: string) =>
        (await pool.query(`SELECT job FROM "${table(run)}" WHERE queue = $1 AND ${where}`, [queue(run)]))
          .rows;
      return {
        unsettled: async () => (await rows(`state IN ('queued', 'retrying', 'running')`)).length,
        jobs: async () => (await rows('true')).length,
        deadLettered: async () =>
          (await rows(`state = 'dead'`)).map(
            (row) => (JSON.parse(row.job) as { event: { id: string } }).event.id,
          ),
      };
    },
    async cleanup(run) {
      await removeQueue(queue(run)).catch(() => {});
      await pool.query(`DROP TABLE IF EXISTS "${table(run)}"`);
      await pool.end();
    },
  };
}

describe.skipIf(process.env.CI_REPEAT_RUN === '1')('broker fleets', () => {
  it('RabbitMQ fleet: 2 receivers, 3 workers, one of each SIGKILLed, RabbitMQ restarted: no event lost, dead-letter exact', async () => {
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
  }, 300_000);

  it('NATS fleet: 2 receivers, 3 workers, one of each SIGKILLed, NATS restarted: no event lost, dead-letter exact', async () => {
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
  }, 300_000);
});
