import amqp from 'amqplib';
import pg from 'pg';
import {
  createRabbitmqWorker,
  type RabbitmqDurableQueue,
  rabbitmqDeadLetters,
  rabbitmqQueue,
} from '../../src/durable/rabbitmq/index.js';
import { rabbitmqInternals } from '../../src/durable/rabbitmq/queue.js';
import { DATABASE_URL } from '../support/harness/cluster.js';
import type { DeadLetterHarness } from './dead-letters-conformance.js';
import type { Engine } from './queue-conformance.js';

export const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * RabbitMQ queues named `<run>.<prefix><n>`, their ledger a table of the run's own; cleanup() deletes the
 * queues each declared and drops the table.
 */
export function rabbitmqQueues(run: string, prefix: string) {
  const table = `mw_jobs_${run.replaceAll('-', '_')}`;
  const made: RabbitmqDurableQueue[] = [];
  let queues = 0;
  const queue = (
    attempts: number,
    options: { retentionMs?: number; url?: string; name?: string; backoffMs?: number } = {},
  ) => {
    const made1 = rabbitmqQueue({
      url: RABBITMQ_URL,
      name: `mw-${run}.${prefix}${++queues}`,
      ledger: { connectionString: DATABASE_URL, table },
      attempts,
      backoffMs: 50,
      countsIntervalMs: 100,
      ...options,
    });
    made.push(made1);
    return made1;
  };
  async function cleanup() {
    const connection = await amqp.connect(RABBITMQ_URL);
    const channel = await connection.createChannel();
    channel.on('error', () => {});
    for (const one of made) {
      for (const name of rabbitmqInternals(one, 'cleanup').broker.declared())
        await channel.deleteQueue(name).catch(() => {});
    }
    await connection.close().catch(() => {});
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
    await client.end();
  }
  return { queue, cleanup, table };
}

export function rabbitmqEngine(run: string): Engine<RabbitmqDurableQueue> {
  const { queue, cleanup } = rabbitmqQueues(run, 'q');
  return {
    queue: (attempts) => queue(attempts),
    worker: (receiver, one, concurrency, options) =>
      createRabbitmqWorker({ receiver, queue: one, concurrency, ...options }),
    // Nothing listens on port 1: the connection is refused.
    unreachable: () => queue(1, { url: 'amqp://guest:guest@127.0.0.1:1', name: `mw-${run}.down` }),
    cleanup,
  };
}

export function rabbitmqHarness(
  run: string,
): DeadLetterHarness<RabbitmqDurableQueue> & { cleanup(): Promise<void> } {
  const { queue, cleanup, table } = rabbitmqQueues(run, 'dl');
  return {
    queue: (attempts, options) => queue(attempts, options),
    worker: (receiver, one) => createRabbitmqWorker({ receiver, queue: one, concurrency: 4 }),
    sweep: (one) => rabbitmqInternals(one, 'sweep').ledger.sweep(),
    deadLetters: (one) => rabbitmqDeadLetters({ queue: one }),
    apart: (one) =>
      rabbitmqDeadLetters({
        url: RABBITMQ_URL,
        ledger: { connectionString: DATABASE_URL, table },
        name: one.name,
      }),
    unreachable: () =>
      rabbitmqDeadLetters({
        url: RABBITMQ_URL,
        ledger: { connectionString: 'postgres://postgres@127.0.0.1:1/test', table },
        deadlineMs: 2000,
      }),
    cleanup,
  };
}
