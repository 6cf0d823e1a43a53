import { WebhookConfigError } from '../../base/errors.js';
import type { LedgerOptions } from '../ledger/ledger.js';
import { type LedgerQueue, type LedgerQueueParts, ledgerQueue, ORPHAN_MARGIN_MS } from '../ledger/queue.js';
import type { DurableQueueOptions } from '../port.js';
import { Broker, type RabbitmqConnectionOptions } from './broker.js';

export interface RabbitmqQueueOptions extends DurableQueueOptions, RabbitmqConnectionOptions {
  /**
   * The ledger: a table in your PostgreSQL (`pool` or `connectionString`, and `table`) that remembers which
   * events are queued, running, completed or dead. RabbitMQ has no dedupe of its own: the ledger answers a
   * redelivery (409 while its job waits or runs, 200 once it completed or sits in the dead letters), lets a
   * worker run an event only under its claim, and keeps the dead letters.
   */
  ledger: LedgerOptions;
}

/** A DurableQueue on RabbitMQ, with what createRabbitmqWorker needs to consume it. */
export interface RabbitmqDurableQueue extends LedgerQueue<'rabbitmq'> {
  /** The job queue's name (its dead-letter queue is `<name>.dead`, its wait queues `<name>.wait.<ms>`). */
  readonly name: string;
  /** Creates the ledger's table and declares the queues; rejects once `deadlineMs` (default 10 s) passed. */
  ready(deadlineMs?: number): Promise<void>;
}

export const DEFAULT_QUEUE_NAME = 'messaging-webhooks';

/**
 * Durable acknowledgement on RabbitMQ: each event is written to the ledger while it is published persistent to
 * a quorum queue on a confirm channel; the delivery is answered 202 only once the row is committed and
 * RabbitMQ confirmed the message (a nack, a closed channel or the deadline: 503, and the ledger row is taken
 * back). The dedupe key is the message id.
 *
 *   const queue = rabbitmqQueue({ url: 'amqp://localhost', ledger: { pool } });
 *   createReceiver({ secrets, queue });   // and in the worker processes: createRabbitmqWorker({ receiver, queue })
 */
export function rabbitmqQueue(options: RabbitmqQueueOptions): RabbitmqDurableQueue {
  const name = options?.name ?? DEFAULT_QUEUE_NAME;
  const broker = new Broker(options, name, 'rabbitmqQueue');
  const { queue, parts } = ledgerQueue(
    'rabbitmq',
    name,
    options,
    {
      name: 'RabbitMQ',
      opens: 'RabbitMQ queue',
      orphanGraceMs: ORPHAN_MARGIN_MS,
      publish: (job, text) => broker.publishText(name, job.key, text),
      open: () => broker.publisher(),
      close: () => broker.close(),
    },
    'rabbitmqQueue',
  );
  internals.set(queue, { broker, ...parts });
  return queue;
}

/** What the workers and dead letters use of a queue, kept off its public face. */
export interface RabbitmqInternals extends LedgerQueueParts {
  broker: Broker;
}

const internals = new WeakMap<object, RabbitmqInternals>();

/** The internals of a queue rabbitmqQueue(…) made; a configuration error for anything else. */
export function rabbitmqInternals(queue: unknown, who: string): RabbitmqInternals {
  const found = typeof queue === 'object' && queue !== null ? internals.get(queue) : undefined;
  if (!found) {
    throw new WebhookConfigError(
      `${who} needs \`queue\`: the queue rabbitmqQueue(…) made, which the receiver uses.`,
    );
  }
  return found;
}
