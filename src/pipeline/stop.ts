import type { ReasonCode } from '../contract/reasons.js';
import type { EventIssue } from '../events/catalogue.js';

/**
 * A reason to answer with, and what the answer says beyond the reason's own message. Retry-After is the
 * answer's business (9-answer): a stage sets it only when it knows better than the receiver's setting.
 */
export interface Rejection {
  readonly stop: ReasonCode;
  readonly message?: string;
  readonly issues?: EventIssue[];
  readonly retryAfterSeconds?: number;
}

/**
 * Where a stage ends the walk of a request: a rejection, or an acknowledgement with no handler run by this
 * request (the event is a duplicate, a job engine took it: 202, or its mode is ignored: 200).
 */
export type Stop =
  | Rejection
  | { readonly stop: 'duplicate' }
  | { readonly stop: 'accepted' }
  | { readonly stop: 'ignored' };

export const DUPLICATE: Stop = { stop: 'duplicate' };
export const ACCEPTED: Stop = { stop: 'accepted' };
export const IGNORED: Stop = { stop: 'ignored' };
