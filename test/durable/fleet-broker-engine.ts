import pg from 'pg';
import { DATABASE_URL } from '../support/harness/cluster.js';
import type { FleetEngine } from './fleet.js';
import { NATS_URL } from './nats-engine.js';
import { RABBITMQ_URL } from './rabbitmq-engine.js';

/** The broker engines' fleet: the ledger's rows are the jobs, its dead rows the dead letters. */
export function brokerFleet(
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
