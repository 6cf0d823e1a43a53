import { WebhookConfigError } from '../../base/errors.js';
import { DEFAULT_DEADLINE_MS, type DeadLetters, deadLetters } from '../dead-letters.js';
import { ledgerDeadLetters } from '../ledger/dead-letters.js';
import { type LedgerOptions, openLedger } from '../ledger/ledger.js';
import { NatsBroker } from './broker.js';
import type { NatsConnectionOptions } from './connection.js';
import { natsEngine } from './engine.js';
import { natsInternals } from './internals.js';
import { DEFAULT_STREAM_NAME, type NatsDurableQueue } from './queue.js';

/** Where the dead letters are: the queue itself, or where to find it. */
export interface NatsDeadLettersOptions extends NatsConnectionOptions {
  /** The queue the receiver and its workers use (natsQueue(…)); or pass `servers` and `ledger` (and `name`). */
  queue?: NatsDurableQueue;
  /** The queue's ledger in PostgreSQL, as natsQueue takes it. */
  ledger?: LedgerOptions;
  /** The stream's name. Default `messaging-webhooks`, natsQueue's. */
  name?: string;
  /** How long each call may take (ms). Default 10000. */
  deadlineMs?: number;
}

/**
 * The dead letters of a JetStream queue, kept in its ledger. A replay sets the event queued again with its
 * attempts reset and publishes its job to the stream under a message id of its own (so the duplicate window
 * does not drop it); a purge deletes it, so a later delivery of the event is a new job.
 *
 *   const dead = natsDeadLetters({ queue });   // the queue of the receiver and its workers
 *   for (const letter of await dead.list()) console.log(letter.id, letter.error.message);
 */
export function natsDeadLetters(options: NatsDeadLettersOptions): DeadLetters {
  const deadlineMs = options?.deadlineMs ?? DEFAULT_DEADLINE_MS;
  if (options?.queue) {
    const { ledger, broker } = natsInternals(options.queue, 'natsDeadLetters');
    const engine = ledgerDeadLetters(
      ledger,
      natsEngine,
      (job) => broker.publish(job, deadlineMs, true),
      async () => {},
    );
    return deadLetters(engine, options.deadlineMs);
  }
  if (!options?.ledger || (!options.servers && !options.connection)) {
    throw new WebhookConfigError(
      'natsDeadLetters needs the `queue` your receiver uses (natsQueue(…)), or `servers` (where NATS is), `ledger` (its PostgreSQL) and the stream `name`.',
    );
  }
  const name = options.name ?? DEFAULT_STREAM_NAME;
  // Replays go to the stream as it is: its settings are the queue's, declared where the queue runs.
  const broker = new NatsBroker(options, name, undefined, 'natsDeadLetters');
  const ledger = openLedger(options.ledger, name, 'natsDeadLetters');
  const engine = ledgerDeadLetters(
    ledger,
    natsEngine,
    (job) => broker.publish(job, deadlineMs, true),
    async () => {
      await broker.close();
      await ledger.close();
    },
  );
  return deadLetters(engine, options.deadlineMs);
}
