import { option, rules } from '../../base/options.js';
import type { LedgerOptions } from '../ledger/ledger.js';
import { type LedgerQueue, ledgerQueue, ORPHAN_MARGIN_MS } from '../ledger/queue.js';
import type { DurableQueueOptions } from '../port.js';
import { NatsBroker } from './broker.js';
import type { NatsConnectionOptions } from './connection.js';
import { internals } from './internals.js';

export interface NatsQueueOptions extends DurableQueueOptions, NatsConnectionOptions {
  /**
   * The ledger: a table in your PostgreSQL (`pool` or `connectionString`, and `table`) that remembers which
   * events are queued, running, completed or dead. JetStream drops a publish whose Nats-Msg-Id it saw within
   * its duplicate window only; the ledger answers every redelivery (409 while its job waits or runs, 200 once
   * it completed or sits in the dead letters) for `retentionMs`, lets a worker run an event only under its
   * claim there, and keeps the dead letters.
   */
  ledger: LedgerOptions;
  /** Replicas of the stream: 3 on a JetStream cluster, so that a node lost loses no job. Default 1. */
  replicas?: number;
  /** JetStream's duplicate window for the Nats-Msg-Id (ms). Default 120000. */
  duplicateWindowMs?: number;
}

/** A DurableQueue on NATS JetStream, with what createNatsWorker needs to consume it. */
export interface NatsDurableQueue extends LedgerQueue<'nats'> {
  /** The stream's name (its subject is `<name>.jobs`, its consumer `<name>-workers`). */
  readonly name: string;
  /** Creates the ledger's table, the stream and its consumer; rejects once `deadlineMs` (default 10 s) passed. */
  ready(deadlineMs?: number): Promise<void>;
}

export const DEFAULT_STREAM_NAME = 'messaging-webhooks';

/**
 * Durable acknowledgement on NATS JetStream: each event is written to the ledger while it is published to a
 * file-backed work-queue stream with its dedupe key as Nats-Msg-Id; the delivery is answered 202 only once
 * the row is committed and JetStream acknowledged the publish (an error or the deadline: 503, and the ledger
 * row is taken back).
 *
 *   const queue = natsQueue({ servers: 'nats://localhost:4222', ledger: { pool } });
 *   createReceiver({ secrets, queue });   // and in the worker processes: createNatsWorker({ receiver, queue })
 */
export function natsQueue(options: NatsQueueOptions): NatsDurableQueue {
  const name = options?.name ?? DEFAULT_STREAM_NAME;
  const replicas = option('replicas', options?.replicas, 1, rules.whole({ min: 1, max: 5 }));
  const duplicateWindowMs = option(
    'duplicateWindowMs',
    options?.duplicateWindowMs,
    120_000,
    rules.whole({ min: 1000, unit: 'milliseconds' }),
  );
  const broker = new NatsBroker(options, name, { replicas, duplicateWindowMs }, 'natsQueue');
  const { queue, parts } = ledgerQueue(
    'nats',
    name,
    options,
    {
      name: 'JetStream',
      opens: 'JetStream stream',
      // Within the window a retry's publish is dropped as a copy of this message: it is the event's only one.
      orphanGraceMs: duplicateWindowMs + ORPHAN_MARGIN_MS,
      publish: (job, text, deadlineMs) => broker.publish(job, deadlineMs, false, text),
      open: () => broker.jetstream(),
      close: () => broker.close(),
    },
    'natsQueue',
  );
  internals.set(queue, { broker, ...parts });
  return queue;
}
