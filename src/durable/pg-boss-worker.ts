import type { JobResult, JobWithMetadata } from 'pg-boss';
import { WebhookConfigError, WebhookHandlerError } from '../errors.js';
import { closeWorker, deadLetterReason, durationOption, workerRunner } from './job-run.js';
import type { PgBossDurableQueue } from './pg-boss-queue.js';
import type { DurableJob, DurableWorker, DurableWorkerOptions } from './types.js';

export interface PgBossWorkerOptions extends DurableWorkerOptions<PgBossDurableQueue> {
  /**
   * Jobs this worker runs at once: as many pg-boss workers of one job each, so every job is settled the
   * moment its handlers end. Default 16.
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
  const { queue } = options;
  const concurrency = durationOption('concurrency', options.concurrency, 16);
  const runner = workerRunner(options);
  await queue.ready();
  await expectExpiryBeyond(queue, runner.handlerTimeoutMs);
  // One job per fetch, `concurrency` fetchers: a batch would hold its finished jobs active (a delivery of
  // their events answered 409) until its slowest job ended, and a killed worker would run them all again.
  const workId = await queue.boss.work(
    queue.name,
    {
      batchSize: 1,
      localConcurrency: concurrency,
      perJobResults: true,
      includeMetadata: true,
      pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
    },
    (jobs: JobWithMetadata<DurableJob>[]) => Promise.all(jobs.map(settle)),
  );
  async function settle(job: JobWithMetadata<DurableJob>): Promise<JobResult> {
    const attempt = job.retryCount + 1;
    const attempts = job.retryLimit + 1;
    try {
      await runner.run(job.data, attempt, attempts);
      return { id: job.id, status: 'completed' };
    } catch (error) {
      // pg-boss retries a failed job within its retryLimit, then moves it to the dead-letter queue.
      if (attempt >= attempts) {
        await runner.deadLettered(job.data, deadLetterReason(error), error, attempt, attempts);
      }
      const code = error instanceof WebhookHandlerError ? error.code : 'handler_failed';
      return { id: job.id, status: 'failed', output: { code, message: String((error as Error)?.message) } };
    }
  }
  return {
    close: (closeOptions) =>
      closeWorker(
        () => queue.boss.offWork(queue.name, { id: workId, wait: true }),
        runner,
        closeOptions?.timeoutMs,
      ),
    counters: runner.counters,
  };
}

/**
 * pg-boss fails a job that stays active past its queue's expireInSeconds, and runs it again: while the first
 * run may still be going. The handler deadline has to end every run before that.
 */
async function expectExpiryBeyond(queue: PgBossDurableQueue, handlerTimeoutMs: number): Promise<void> {
  const expireInSeconds = (await queue.boss.getQueue(queue.name))?.expireInSeconds;
  if (expireInSeconds !== undefined && expireInSeconds * 1000 <= handlerTimeoutMs) {
    throw new WebhookConfigError(
      `handlerTimeoutMs (${handlerTimeoutMs} ms) must be less than the pg-boss queue's expireInSeconds ` +
        `(${expireInSeconds} s): lower handlerTimeoutMs or raise the queue's expiry.`,
    );
  }
}
