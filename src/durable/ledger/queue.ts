import { withDeadline } from '../../base/deadline.js';
import { DEFAULT_RETENTION_MS } from '../../stores/retention.js';
import { COUNTS_INTERVAL_MS, countsPoller } from '../counts-poller.js';
import { retrySchedule } from '../job-run.js';
import type { DurableJob, DurableQueue, DurableQueueOptions, EnqueueResult, RetryOptions } from '../port.js';
import { type Ledger, type LedgerOptions, openLedger } from './ledger.js';

/** What a queue needs of its broker: publish one job until the broker holds it, open, close. */
export interface LedgerBroker {
  publish(job: DurableJob, deadlineMs: number): Promise<unknown>;
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
}

/**
 * The queue of a broker engine: each event is admitted by the ledger, then published; the delivery is answered
 * 202 only once the broker holds it, and a publish that fails takes the ledger row back, so the service's retry
 * hands it off again. `broker` names the broker in the deadline errors (`RabbitMQ`, `JetStream`).
 */
export function ledgerQueue<E extends string>(
  engine: E,
  name: string,
  options: DurableQueueOptions & { ledger?: LedgerOptions },
  broker: LedgerBroker & { name: string; opens: string },
  who: string,
): { queue: LedgerQueue<E>; parts: LedgerQueueParts } {
  const ledger = openLedger(options?.ledger ?? {}, name, who);
  const schedule = retrySchedule(options);
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const poller = countsPoller(() => ledger.counts(), options.countsIntervalMs ?? COUNTS_INTERVAL_MS);

  async function enqueue(job: DurableJob, deadlineMs: number): Promise<EnqueueResult> {
    const admitted = await ledger.admit(job);
    if (admitted !== 'enqueued') return admitted;
    try {
      await broker.publish(job, deadlineMs);
    } catch (error) {
      // Not held: the service's retry of this delivery hands it off again.
      await ledger.withdraw(job.key).catch(() => {});
      throw error;
    }
    return 'enqueued';
  }

  const queue: LedgerQueue<E> = {
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
  };
  return { queue, parts: { ledger, schedule, retentionMs } };
}
