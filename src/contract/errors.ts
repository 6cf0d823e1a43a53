import { causeText } from '../base/errors.js';
import type { ReasonCode } from './reasons.js';

/**
 * What onError is told: the reason code of the answer, or one of the failures that change no answer (the
 * request was already answered or is answered anyway): a claim taken over before it settled, a throwing
 * waitUntil, a job engine whose durability could not be checked.
 */
export type ErrorCode =
  | ReasonCode
  | 'lease_lost'
  | 'wait_until_failed'
  | 'persistence_unchecked'
  | DeadLetterCode;

/**
 * Why a durable job went to its engine's dead-letter: its handlers failed, or passed the worker's
 * handlerTimeoutMs, on its last attempt; its worker died or froze with it too often (job_stalled); its worker
 * lost the job's lock while the handlers ran (lock_lost).
 */
export type DeadLetterCode = 'handler_failed' | 'handler_timeout' | 'job_stalled' | 'lock_lost';

/**
 * A handler threw, or the pipeline failed around it; passed to onError handlers. Its message ends with its
 * cause's text (`… Cause: The Redis store did not answer within 1000 ms …`): a handler that prints only
 * `error.message` still sees which store, which deadline or which handler error.
 */
export class WebhookHandlerError extends Error {
  override name = 'WebhookHandlerError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    const cause = options && 'cause' in options ? causeText(options.cause) : undefined;
    super(cause === undefined ? message : `${message} Cause: ${cause}`, options);
    this.code = code;
  }
}
