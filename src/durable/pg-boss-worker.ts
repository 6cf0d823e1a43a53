import { createJobRunner } from './job-run.js';
import type { PgBossDurableQueue } from './pg-boss-queue.js';
import type { PgBossJob, PgBossJobResult } from './pg-boss-types.js';
import type { DurableJob, DurableWorker, DurableWorkerOptions } from './types.js';

export interface PgBossWorkerOptions extends DurableWorkerOptions<PgBossDurableQueue> {
  /**
   * Jobs this worker runs at once: it fetches up to this many in one batch, and the next batch once they
   * all settled. Default 16.
   */
  concurrency?: number;
  /** How often an idle worker looks for jobs. Default 2 s (pg-boss's). */
  pollingIntervalSeconds?: number;
}

/**
 * Runs the receiver's handlers on the jobs of a pg-boss queue. A failed run is retried by pg-boss after an
 * exponential, jittered backoff (the queue's `attempts` and `backoffMs`); after the last attempt pg-boss
 * copies the job to the dead-letter queue and onError is told. close() lets running jobs finish and leaves
 * the others queued.
 */
export async function createPgBossWorker(options: PgBossWorkerOptions): Promise<DurableWorker> {
  const { receiver, queue } = options;
  const runner = createJobRunner(receiver);
  await queue.ready();
  // One batch of up to `concurrency` jobs at a time, each settled on its own (perJobResults); a full batch
  // fetches the next at once (burstWhenBatchFull), an idle worker polls.
  const workId = await queue.boss.work(
    queue.name,
    {
      batchSize: options.concurrency ?? 16,
      perJobResults: true,
      burstWhenBatchFull: true,
      includeMetadata: true,
      pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
    },
    (jobs: PgBossJob<DurableJob>[]) => Promise.all(jobs.map(settle)),
  );
  async function settle(job: PgBossJob<DurableJob>): Promise<PgBossJobResult> {
    try {
      await runner.run(job.data, job.retryCount + 1, job.retryLimit + 1);
      return { id: job.id, status: 'completed' };
    } catch (error) {
      // pg-boss retries a failed job within its retryLimit, then moves it to the dead-letter queue.
      return {
        id: job.id,
        status: 'failed',
        output: { message: String((error as Error)?.message ?? error) },
      };
    }
  }
  return {
    close: () => queue.boss.offWork(queue.name, { id: workId, wait: true }),
    counters: runner.counters,
  };
}
