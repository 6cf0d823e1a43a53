import { boundsItsOwnEnqueue, withDeadline } from '../../base/deadline.js';
import { DEFAULT_RETENTION_MS } from '../../stores/retention.js';
import { COUNTS_INTERVAL_MS, countsPoller } from '../counts-poller.js';
import { retrySchedule } from '../job-run.js';
import type { DurableJob, DurableQueue, DurableQueueOptions, EnqueueResult, RetryOptions } from '../port.js';
import { type Ledger, type LedgerOptions, openLedger } from './ledger.js';
import { seenKeys } from './seen-keys.js';

/**
 * How long past its publish (and past the broker's duplicate window, where it has one) a worker waits for the
 * ledger row of a message: longer than any handoff's deadline, with room for clocks that disagree.
 */
export const ORPHAN_MARGIN_MS = 60_000;

/**
 * What a queue needs of its broker: publish one job (`text`, the job as JSON, the same text its ledger row
 * holds) until the broker holds it, open, close.
 */
export interface LedgerBroker {
  publish(job: DurableJob, text: string, deadlineMs: number): Promise<unknown>;
  open(): Promise<unknown>;
  close(): Promise<void>;
}

/** A queue on a broker with the ledger in front of it, as the broker engines make it. */
export interface LedgerQueue<E extends string> extends DurableQueue {
  readonly engine: E;
  readonly name: string;
  ready(deadlineMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** What the workers and dead letters of a ledger queue use, kept off its public face. */
export interface LedgerQueueParts {
  ledger: Ledger;
  schedule: Required<RetryOptions>;
  retentionMs: number;
  /**
   * How long after its publish a message whose event has no ledger row is looked at again, in case its row is
   * still being written, before it is dropped as the copy of a handoff that failed.
   */
  orphanGraceMs: number;
}

/**
 * The queue of a broker engine: each event's ledger row is written while it is published; the delivery is
 * answered 202 only once the row is committed and the broker holds the message, and a publish that fails
 * takes the row back, so the service's retry hands it off again. `broker` names the broker in the deadline
 * errors (`RabbitMQ`, `JetStream`); `orphanGraceMs` is how long its workers wait for a row (LedgerQueueParts).
 */
export function ledgerQueue<E extends string>(
  engine: E,
  name: string,
  options: DurableQueueOptions & { ledger?: LedgerOptions },
  broker: LedgerBroker & { name: string; opens: string; orphanGraceMs: number },
  who: string,
): { queue: LedgerQueue<E>; parts: LedgerQueueParts } {
  const ledger = openLedger(options?.ledger ?? {}, name, who);
  const schedule = retrySchedule(options);
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const poller = countsPoller(() => ledger.counts(), options.countsIntervalMs ?? COUNTS_INTERVAL_MS);

  const seen = seenKeys();
  const publish = (job: DurableJob, text: string, deadlineMs: number) =>
    broker.publish(job, text, deadlineMs).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );

  async function enqueue(job: DurableJob, deadlineMs: number): Promise<EnqueueResult> {
    // A first delivery: the row and the publish go out together, and the handoff waits for the slower of the
    // two round trips, not their sum. A worker that meets the message before its row looks again
    // (`orphanGraceMs`). A redelivery this process handed off lately publishes only once its row is written.
    const text = JSON.stringify(job);
    const publishing = seen.again(job.key) ? undefined : publish(job, text, deadlineMs);
    const admitted = await ledger.admit(job.key, text);
    // A copy of an event queued, running or settled: a copy published runs nothing (the claim decides).
    if (admitted !== 'enqueued') return admitted;
    const failed = await (publishing ?? publish(job, text, deadlineMs));
    if (failed) {
      // Not held: the service's retry of this delivery hands it off again.
      await ledger.withdraw(job.key).catch(() => {});
      throw failed.error;
    }
    return 'enqueued';
  }

  const queue: LedgerQueue<E> = boundsItsOwnEnqueue({
    engine,
    name,
    ready: (deadlineMs = 10_000) =>
      withDeadline(
        Promise.all([ledger.ready(), broker.open()]).then(() => undefined),
        deadlineMs,
        `Opening the ${broker.opens} and its ledger`,
      ),
    enqueue: (job, deadlineMs) =>
      withDeadline(enqueue(job, deadlineMs), deadlineMs, `Publishing the job to ${broker.name}`),
    counts: poller.counts,
    async close() {
      poller.stop();
      await broker.close();
      await ledger.close();
    },
  });
  return { queue, parts: { ledger, schedule, retentionMs, orphanGraceMs: broker.orphanGraceMs } };
}
