import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import {
  createNatsWorker,
  type NatsDurableQueue,
  natsDeadLetters,
  natsQueue,
} from '../../src/durable/nats/index.js';
import { natsInternals } from '../../src/durable/nats/internals.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import type { DeadLetterHarness } from './dead-letters-conformance.js';
import type { Engine } from './queue-conformance.js';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** JetStream streams named `mw-<run>-<prefix><n>`, their ledger a table of the run's own; cleanup() removes both. */
export function natsQueues(run: string, prefix: string) {
  const table = `mw_jobs_${run.replaceAll('-', '_')}_${prefix}`;
  const made: NatsDurableQueue[] = [];
  let queues = 0;
  const queue = (
    attempts: number,
    options: { retentionMs?: number; servers?: string; name?: string; backoffMs?: number } = {},
  ) => {
    const one = natsQueue({
      servers: NATS_URL,
      name: `mw-${run}-${prefix}${++queues}`,
      ledger: { connectionString: DATABASE_URL, table },
      attempts,
      backoffMs: 50,
      countsIntervalMs: 100,
      ...options,
    });
    made.push(one);
    return one;
  };
  async function cleanup() {
    const nc = await connect({ servers: NATS_URL });
    const jsm = await jetstreamManager(nc);
    for (const one of made)
      await jsm.streams.delete(natsInternals(one, 'cleanup').broker.stream).catch(() => {});
    await nc.close();
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
    await client.end();
  }
  return { queue, cleanup, table };
}

export function natsEngine(run: string): Engine<NatsDurableQueue> {
  const { queue, cleanup } = natsQueues(run, 'q');
  return {
    queue: (attempts) => queue(attempts),
    worker: (receiver, one, concurrency, options) =>
      createNatsWorker({ receiver, queue: one, concurrency, ...options }),
    // Nothing listens on port 1: the connection is refused.
    unreachable: () => queue(1, { servers: 'nats://127.0.0.1:1', name: `mw-${run}-down` }),
    cleanup,
  };
}

export function natsHarness(run: string): DeadLetterHarness<NatsDurableQueue> & { cleanup(): Promise<void> } {
  const { queue, cleanup, table } = natsQueues(run, 'dl');
  return {
    queue: (attempts, options) => queue(attempts, options),
    worker: (receiver, one) => createNatsWorker({ receiver, queue: one, concurrency: 4 }),
    sweep: (one) => natsInternals(one, 'sweep').ledger.sweep(),
    deadLetters: (one) => natsDeadLetters({ queue: one }),
    apart: (one) =>
      natsDeadLetters({
        servers: NATS_URL,
        ledger: { connectionString: DATABASE_URL, table },
        name: one.name,
      }),
    unreachable: () =>
      natsDeadLetters({
        servers: NATS_URL,
        ledger: { connectionString: 'postgres://postgres@127.0.0.1:1/test', table },
        deadlineMs: 2000,
      }),
    cleanup,
  };
}
