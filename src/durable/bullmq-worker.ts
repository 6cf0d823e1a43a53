import { type Job, Worker } from 'bullmq';
import { WebhookHandlerError } from '../errors.js';
import type { BullmqDurableQueue } from './bullmq-queue.js';
import { createJobRunner } from './job-run.js';
import type { DurableJob, DurableWorker, DurableWorkerOptions } from './types.js';

export interface BullmqWorkerOptions extends DurableWorkerOptions<BullmqDurableQueue> {
  /**
   * How long a running job stays locked to this worker without a renewal; the job of a worker that died
   * goes back to the queue after it (and runs again). Default 30000 ms (BullMQ's).
   */
  lockDurationMs?: number;
}

/**
 * Runs the receiver's handlers on the jobs of a BullMQ queue. A failed run is retried by BullMQ after an
 * exponential, jittered backoff (the queue's `attempts` and `backoffMs`); after the last attempt the job
 * stays in BullMQ's failed set (the dead-letter) and onError is told. close() lets running jobs finish and
 * leaves the others queued.
 */
export async function createBullmqWorker(options: BullmqWorkerOptions): Promise<DurableWorker> {
  const { receiver, queue } = options;
  const runner = createJobRunner(receiver);
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker(
    queue.queue.name,
    (job: Job<DurableJob>) => runner.run(job.data, job.attemptsMade + 1, job.opts.attempts ?? 1),
    {
      connection: queue.queue.opts.connection,
      prefix: queue.queue.opts.prefix,
      concurrency: options.concurrency ?? 16,
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
    },
  );
  // Connection trouble: BullMQ reconnects by itself; onError hears of it (an unheard 'error' would crash).
  worker.on('error', (cause) => {
    void receiver.reportError(
      new WebhookHandlerError('store_unavailable', 'The BullMQ worker lost Redis; it reconnects.', { cause }),
      { requestId: 'worker', reason: 'store_unavailable' },
    );
  });
  await worker.waitUntilReady();
  return {
    close: () => worker.close(),
    counters: runner.counters,
  };
}
