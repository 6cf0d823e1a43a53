import { WebhookConfigError } from '../../base/errors.js';
import { option, rules } from '../../base/options.js';
import { WebhookHandlerError } from '../../contract/errors.js';
import type { TraceCarrier } from '../../contract/tracing.js';
import type { DedupeStore } from '../../stores/types.js';
import { closeWorker, deadLetterReason, workerRunner } from '../job-run.js';
import type { DurableJob, DurableWorker, DurableWorkerOptions } from '../port.js';
import { pgBossEngine } from './engine.js';
import { jobOf } from './job-data.js';
import type { PgBossDurableQueue } from './queue.js';
import { watchSilentDeadLetters } from './silent-dead-letters.js';
import type { PgBossJob, PgBossJobResult } from './types.js';

// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export interface PgBossWorkerOptions<S extends DedupeStore<any> | undefined = undefined>
  extends DurableWorkerOptions<PgBossDurableQueue, S> {
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
 * copies the job to the dead-letter queue and onError is told, also when pg-boss failed it itself (a worker
 * that died or froze on it). close() lets running jobs finish and leaves
 * the others queued.
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export async function createPgBossWorker<S extends DedupeStore<any> | undefined = undefined>(
  options: PgBossWorkerOptions<S>,
): Promise<DurableWorker> {
  const { queue } = options;
  const concurrency = option('concurrency', options.concurrency, 16, rules.whole({ min: 1 }));
  const runner = workerRunner(options, pgBossEngine, queue.name);
  await queue.ready();
  await expectExpiryBeyond(queue, runner.handlerTimeoutMs);
  // Fetched in batches (one fetch per job would wait out the polling interval after each), but each job
  // is settled the moment its handlers end: a finished job never waits for its batch (its event's delivery
  // is a duplicate at once), and a worker killed mid-batch leaves only its unfinished jobs to run again.
  // The batch's own per-job results then find them settled already (pg-boss's attempt fence: no change).
  const workId = await queue.boss.work(
    queue.name,
    {
      batchSize: concurrency,
      burstWhenBatchFull: true,
      perJobResults: true,
      includeMetadata: true,
      pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
    },
    (jobs: PgBossJob<DurableJob>[]) => Promise.all(jobs.map(settle)),
  );
  async function settle(job: PgBossJob<DurableJob>): Promise<PgBossJobResult> {
    const data = jobOf(job.data);
    const attempt = job.retryCount + 1;
    const attempts = job.retryLimit + 1;
    // pg-boss keeps a failed attempt's output until the retry: the spans of the attempts before travel in it.
    let attemptTraces: TraceCarrier[] | undefined;
    const trace = runner.traced
      ? {
          earlier: (job.output as { attemptTraces?: TraceCarrier[] } | null | undefined)?.attemptTraces ?? [],
          keep: (kept: TraceCarrier[]) => {
            attemptTraces = kept;
            return undefined;
          },
        }
      : undefined;
    try {
      await runner.run(data, attempt, attempts, trace);
    } catch (error) {
      // pg-boss retries a failed job within its retryLimit, then moves it to the dead-letter queue.
      if (attempt >= attempts) {
        await runner.deadLettered(data, deadLetterReason(error, pgBossEngine), error, attempt, attempts);
      }
      const code = error instanceof WebhookHandlerError ? error.code : 'handler_failed';
      const output = { code, message: String((error as Error)?.message), attemptTraces };
      await queue.boss.fail(queue.name, job, output);
      return { id: job.id, status: 'failed', output };
    }
    await queue.boss.complete(queue.name, job);
    return { id: job.id, status: 'completed' };
  }
  const stopWatching = watchSilentDeadLetters(queue, ({ job, reason, cause, attempt, attempts }) =>
    runner.deadLettered(job, reason, cause, attempt, attempts),
  );
  return {
    close: (closeOptions) => {
      stopWatching();
      return closeWorker(
        () => queue.boss.offWork(queue.name, { id: workId, wait: true }),
        runner,
        closeOptions?.timeoutMs,
      );
    },
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
