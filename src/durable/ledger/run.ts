import { WebhookHandlerError } from '../../contract/errors.js';
import { deadLetterReason, type WorkerRunner } from '../job-run.js';
import type { DurableJob, JobEngine, RetryOptions } from '../port.js';
import type { Ledger } from './ledger.js';

/** How long a copy of an event that runs elsewhere (or waits out a backoff) waits before it looks again. */
export const LOOK_AGAIN_MS = 1000;
/** A run's lease in the ledger outlasts its handler deadline by this much before another worker may take it. */
export const LEASE_MARGIN_MS = 5000;

/** What the broker does with the message once the ledger is settled: drop it, or bring it back after a delay. */
export type Settlement = { again: false } | { again: true; delayMs: number };

export interface DeliveryRun {
  ledger: Ledger;
  runner: WorkerRunner;
  engine: JobEngine;
  schedule: Required<RetryOptions>;
  retentionMs: number;
  /** See LedgerQueueParts: how long a message without a ledger row is looked at again. */
  orphanGraceMs: number;
}

/** The delay before attempt `attempt + 1`: backoffMs × 2^(attempt-1), less up to half of it as jitter. */
export function backoffDelay(schedule: Required<RetryOptions>, attempt: number): number {
  const base = schedule.backoffMs * 2 ** (attempt - 1);
  return Math.round(base * (1 - Math.random() * 0.5));
}

/**
 * One delivery of a job by the broker, published `heldMs` ago: its event runs only under a claim in the
 * ledger, so a second copy (a republished handoff, a redelivery after a worker died) runs nothing while the
 * first runs, and nothing once the event completed or sits in the dead letters. A message without a row looks
 * again until `orphanGraceMs` after its publish: its handoff writes the row while it publishes, so the message
 * can arrive first. A failed attempt is recorded with the due time of the next one, the last one as a dead
 * letter (onError told).
 */
export async function runDelivery(
  run: DeliveryRun,
  job: DurableJob,
  heldMs: number,
  trace?: Parameters<WorkerRunner['run']>[3],
): Promise<Settlement> {
  const { ledger, runner, schedule } = run;
  const claim = await ledger.claim(job.key, runner.handlerTimeoutMs + LEASE_MARGIN_MS);
  if (!claim.run) {
    const waitForRow = claim.missing && heldMs < run.orphanGraceMs;
    return claim.later || waitForRow ? { again: true, delayMs: LOOK_AGAIN_MS } : { again: false };
  }
  const { attempt, token } = claim;
  try {
    await runner.run(job, attempt, schedule.attempts, trace);
  } catch (error) {
    const code = error instanceof WebhookHandlerError ? error.code : 'handler_failed';
    const message = String((error as Error)?.message ?? error);
    if (attempt < schedule.attempts) {
      const delayMs = backoffDelay(schedule, attempt);
      await ledger.retry(job.key, token, delayMs, code, message);
      return { again: true, delayMs };
    }
    const reason = deadLetterReason(error, run.engine);
    await ledger.bury(job.key, token, reason, message);
    await runner.deadLettered(job, reason, error, attempt, schedule.attempts);
    return { again: false };
  }
  await ledger.complete(job.key, token, run.retentionMs);
  return { again: false };
}

/**
 * A job the broker itself gave up on (delivered too often: its workers died on it): recorded as a dead letter
 * unless it completed, and onError told.
 */
export async function buryStalled(run: DeliveryRun, job: DurableJob, deliveries: number): Promise<void> {
  const message = `The job of ${job.key} was delivered ${deliveries} times without an answer: its workers died or froze on it.`;
  await run.ledger.bury(job.key, null, 'job_stalled', message);
  await run.runner.deadLettered(job, 'job_stalled', new Error(message), deliveries, run.schedule.attempts);
}

/** The job a message carries, or undefined when it is none of the receiver's. */
export function jobOfMessage(body: Uint8Array): DurableJob | undefined {
  try {
    const job = JSON.parse(Buffer.from(body).toString('utf8')) as DurableJob;
    return typeof job?.key === 'string' && typeof job.event?.type === 'string' ? job : undefined;
  } catch {
    return undefined;
  }
}
