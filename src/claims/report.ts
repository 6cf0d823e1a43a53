import type { ErrorContext } from '../contract/context.js';
import type { ErrorCode } from '../contract/errors.js';

/** Tells onError: one failure, one reason code, the same on the error and in its context. */
export type Report = (
  code: ErrorCode,
  message: string,
  cause: unknown,
  context: ErrorContext,
) => Promise<void>;

/** Why a claimed event was handed back. */
export type Failure = 'handler_failed' | 'store_unavailable' | 'not_replicated';

/** What onError is told when a claim is handed back, by why. */
export const FAILED: Record<Failure, (eventType: string | undefined) => string> = {
  handler_failed: (type) =>
    `A handler for ${type} failed; the claim was released so the service's retry runs it again.`,
  store_unavailable: (type) =>
    `The dedupe store failed while running ${type} in its transaction; the claim was released.`,
  not_replicated: () =>
    'The completion of an event is not on enough replicas; it is answered 503 not_replicated until they hold it.',
};
