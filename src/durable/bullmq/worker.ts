import { type Job, Worker } from 'bullmq';
import { option, rules } from '../../base/options.js';
import { WebhookHandlerError } from '../../contract/errors.js';
import type { DedupeStore } from '../../stores/types.js';
import { closeWorker, deadLetterReason, workerRunner } from '../job-run.js';
import type { AttemptTrace } from '../job-span.js';
import type { DurableJob, DurableWorker, DurableWorkerOptions } from '../port.js';
import { bullmqEngine } from './engine.js';
import type { BullmqDurableQueue } from './queue.js';

// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export interface BullmqWorkerOptions<S extends DedupeStore<any> | undefined = undefined>
  extends DurableWorkerOptions<BullmqDurableQueue, S> {
  /**
   * How long a running job stays locked to this worker without a renewal (ms). The worker renews it every
   * half of it, from the event loop: a handler that blocks the loop longer loses the lock, and the job runs
   * again elsewhere (the first run's result is then refused: onError hears lock_lost). The job of a worker
   * that died is back in the queue after it. Default 30000 (BullMQ's).
   */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock expired (ms). Default half of lockDurationMs. */
  stalledIntervalMs?: number;
  /**
   * How often a job may lose its lock (its worker died or froze) and still run again; one more and it goes
   * to the dead-letter (onError hears job_stalled). Default 1 (BullMQ's).
   */
  maxStalledCount?: number;
}

/**
 * Runs the receiver's handlers on the jobs of a BullMQ queue. A failed run is retried by BullMQ after an
 * exponential, jittered backoff (the queue's `attempts` and `backoffMs`); a job that ends in BullMQ's failed
 * set (the dead-letter) is told to onError by the worker that saw it fail: its own last attempt, or a job
 * that stalled too often, picked up here after its worker died. close() lets running jobs finish and
 * leaves the others queued.
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export async function createBullmqWorker<S extends DedupeStore<any> | undefined = undefined>(
  options: BullmqWorkerOptions<S>,
): Promise<DurableWorker> {
  const { receiver, queue } = options;
  const lockDuration = option(
    'lockDurationMs',
    options.lockDurationMs,
    30_000,
    rules.whole({ min: 1000, unit: 'milliseconds' }),
  );
  const stalledInterval = option(
    'stalledIntervalMs',
    options.stalledIntervalMs,
    Math.max(500, Math.floor(lockDuration / 2)),
    rules.whole({ min: 100, unit: 'milliseconds' }),
  );
  const maxStalledCount = option('maxStalledCount', options.maxStalledCount, 1, rules.whole({ min: 0 }));
  const concurrency = option('concurrency', options.concurrency, 16, rules.whole({ min: 1 }));
  const runner = workerRunner(options, bullmqEngine, queue.queue.name);
  const worker = new Worker(
    queue.queue.name,
    (job: Job<DurableJob>) =>
      runner.run(
        job.data,
        job.attemptsMade + 1,
        job.opts.attempts ?? 1,
        runner.traced ? attemptTrace(job) : undefined,
      ),
    {
      connection: queue.queue.opts.connection,
      prefix: queue.queue.opts.prefix,
      concurrency,
      lockDuration,
      stalledInterval,
      maxStalledCount,
    },
  );
  worker.on('failed', (job: Job<DurableJob> | undefined, error: Error) => {
    // BullMQ sets finishedOn only when the job went to the failed set rather than back to a retry: its
    // last attempt failed, or it stalled more often than maxStalledCount allows.
    if (!job?.finishedOn) return;
    const attempts = job.opts.attempts ?? 1;
    void runner.deadLettered(
      job.data,
      deadLetterReason(error, bullmqEngine),
      error,
      job.attemptsMade,
      attempts,
    );
  });
  // BullMQ reconnects by itself; onError hears what went wrong (an unheard 'error' would crash).
  worker.on('error', (cause) => {
    const lockLost = /missing lock|could not renew lock|lock mismatch/i.test(cause?.message ?? '');
    const error = lockLost
      ? new WebhookHandlerError(
          'lock_lost',
          'A job ran longer than lockDurationMs without a lock renewal (a blocked event loop): BullMQ ' +
            'gave it to another worker and refused this run. Keep handlers off the event loop, or raise lockDurationMs.',
          { cause },
        )
      : new WebhookHandlerError('queue_unavailable', 'The BullMQ worker lost Redis; it reconnects.', {
          cause,
        });
    void receiver.reportError(error, { requestId: 'worker', reason: error.code });
  });
  await worker.waitUntilReady();
  return {
    close: (closeOptions) => closeWorker(() => worker.close(), runner, closeOptions?.timeoutMs),
    counters: runner.counters,
  };
}

/** BullMQ keeps the spans of a job's failed attempts in its data, which a worker may rewrite while it holds it. */
function attemptTrace(job: Job<DurableJob>): AttemptTrace {
  return {
    earlier: job.data.attemptTraces ?? [],
    keep: (attemptTraces) => job.updateData({ ...job.data, attemptTraces }),
  };
}
