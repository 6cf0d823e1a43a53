import { WebhookConfigError, WebhookHandlerError } from '../errors.js';
import type { ErrorContext } from '../handlers.js';
import type { DispatchingReceiver, DurableJob, RetryOptions, WorkerCounters } from './types.js';

export const DEFAULT_ATTEMPTS = 5;
export const DEFAULT_BACKOFF_MS = 1000;

/** Validated retry schedule; a mistake fails when the worker is created, not on the first failure. */
export function retrySchedule(options: RetryOptions): Required<RetryOptions> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new WebhookConfigError(`attempts must be an integer ≥ 1, got ${String(attempts)}.`);
  }
  if (typeof backoffMs !== 'number' || !(backoffMs >= 0)) {
    throw new WebhookConfigError(`backoffMs must be a number ≥ 0, got ${String(backoffMs)}.`);
  }
  return { attempts, backoffMs };
}

/**
 * Runs a job's event through the receiver's handlers, the engine-independent half of a worker: the
 * handlers get the context the receiver saw plus the 1-based attempt; a failure is rethrown for the engine
 * to retry, and the last one is also told to onError (the engine then moves the job to its dead-letter).
 */
export function createJobRunner(receiver: DispatchingReceiver) {
  const counters: WorkerCounters = { running: 0, completed: 0, retried: 0, deadLettered: 0 };

  async function run(job: DurableJob, attempt: number, attempts: number): Promise<void> {
    counters.running++;
    try {
      await receiver.dispatch(job.event, { ...job.ctx, attempt, tx: undefined });
      counters.completed++;
    } catch (cause) {
      if (attempt < attempts) {
        counters.retried++;
      } else {
        counters.deadLettered++;
        const message = `The handlers of ${job.key} failed all ${attempts} attempts; its job is in the dead-letter.`;
        await receiver.reportError(
          new WebhookHandlerError('handler_failed', message, { cause }),
          errorContext(job),
        );
      }
      throw cause;
    } finally {
      counters.running--;
    }
  }

  return { run, counters: (): WorkerCounters => ({ ...counters }) };
}

function errorContext(job: DurableJob): ErrorContext {
  const context: ErrorContext = {
    requestId: job.ctx.requestId,
    reason: 'handler_failed',
    eventType: job.event.type,
    mode: job.ctx.mode,
  };
  if (typeof job.event.id === 'string') context.eventId = job.event.id;
  return context;
}
