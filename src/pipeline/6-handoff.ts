import { WebhookHandlerError } from '../base/errors.js';
import { acceptedOutcome, type Outcome, rejectedOutcome } from '../contract/outcome.js';
import type { DurableJob, DurableQueue } from '../durable/port.js';
import type { ErrorContext } from '../receiver/handlers.js';

/** How long the engine gets to hold a job before the request is answered 503 queue_unavailable. */
export const ENQUEUE_DEADLINE_MS = 3000;

export interface HandOffContext {
  requestId: string;
  retryAfterSeconds: number;
  errorContext: ErrorContext;
  reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void>;
}

/**
 * Durable acknowledgement: the event goes to the job engine under its dedupe key, and the answer says what
 * the engine holds. 202 only once the engine has the job, so a receiver killed before that answered nothing
 * and the service's retry delivers the event again; a failed or late enqueue is 503, retried the same way.
 */
export async function handOff(
  queue: DurableQueue,
  job: DurableJob,
  context: HandOffContext,
): Promise<Outcome> {
  const { requestId, retryAfterSeconds } = context;
  let result: Awaited<ReturnType<DurableQueue['enqueue']>>;
  try {
    result = await queue.enqueue(job, ENQUEUE_DEADLINE_MS, (warning) => {
      void context.reportError(new WebhookHandlerError('persistence_unchecked', warning), {
        ...context.errorContext,
        reason: 'persistence_unchecked',
      });
    });
  } catch (cause) {
    // The engine's own words (unreachable, late, or refused as volatile) are what the operator needs: the
    // error's message ends with its cause's.
    const message = 'The job engine did not take the event.';
    await context.reportError(new WebhookHandlerError('queue_unavailable', message, { cause }), {
      ...context.errorContext,
      reason: 'queue_unavailable',
    });
    return rejectedOutcome('queue_unavailable', requestId, { retryAfterSeconds });
  }
  if (result === 'enqueued') return acceptedOutcome(requestId, 202);
  if (result === 'duplicate') return acceptedOutcome(requestId, 200, true);
  return rejectedOutcome('event_in_progress', requestId, { retryAfterSeconds });
}
