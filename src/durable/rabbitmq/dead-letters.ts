import { WebhookConfigError } from '../../base/errors.js';
import { type DeadLetters, deadLetters } from '../dead-letters.js';
import { ledgerDeadLetters } from '../ledger/dead-letters.js';
import { type LedgerOptions, openLedger } from '../ledger/ledger.js';
import { Broker, type RabbitmqConnectionOptions } from './broker.js';
import { rabbitmqEngine } from './engine.js';
import { DEFAULT_QUEUE_NAME, type RabbitmqDurableQueue, rabbitmqInternals } from './queue.js';

/** Where the dead letters are: the queue itself, or where to find it. */
export interface RabbitmqDeadLettersOptions extends RabbitmqConnectionOptions {
  /** The queue the receiver and its workers use (rabbitmqQueue(…)); or pass `url` and `ledger` (and `name`). */
  queue?: RabbitmqDurableQueue;
  /** The queue's ledger in PostgreSQL, as rabbitmqQueue takes it. */
  ledger?: LedgerOptions;
  /** The queue's name. Default `messaging-webhooks`, rabbitmqQueue's. */
  name?: string;
  /** How long each call may take (ms). Default 10000. */
  deadlineMs?: number;
}

/**
 * The dead letters of a RabbitMQ queue, kept in its ledger. A replay sets the event queued again with its
 * attempts reset and publishes its job to the job queue (confirmed); a purge deletes it, so a later delivery
 * of the event is a new job.
 *
 *   const dead = rabbitmqDeadLetters({ queue });   // the queue of the receiver and its workers
 *   for (const letter of await dead.list()) console.log(letter.id, letter.error.message);
 */
export function rabbitmqDeadLetters(options: RabbitmqDeadLettersOptions): DeadLetters {
  if (options?.queue) {
    const { name } = options.queue;
    const { ledger, broker } = rabbitmqInternals(options.queue, 'rabbitmqDeadLetters');
    const engine = ledgerDeadLetters(
      ledger,
      rabbitmqEngine,
      (job) => broker.publish(name, job),
      async () => {},
    );
    return deadLetters(engine, options.deadlineMs);
  }
  if (!options?.ledger || (!options.url && !options.connection)) {
    throw new WebhookConfigError(
      'rabbitmqDeadLetters needs the `queue` your receiver uses (rabbitmqQueue(…)), or `url` (where RabbitMQ is), `ledger` (its PostgreSQL) and the queue `name`.',
    );
  }
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const broker = new Broker(options, name, 'rabbitmqDeadLetters');
  const ledger = openLedger(options.ledger, name, 'rabbitmqDeadLetters');
  const engine = ledgerDeadLetters(
    ledger,
    rabbitmqEngine,
    (job) => broker.publish(name, job),
    async () => {
      await broker.close();
      await ledger.close();
    },
  );
  return deadLetters(engine, options.deadlineMs);
}
