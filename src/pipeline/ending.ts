import type { ReasonCode } from '../contract/reasons.js';
import type { EventIssue } from '../events/catalogue.js';

/**
 * Why a stage stops the walk of a request, and what the answer says beyond the reason's own message.
 * Retry-After is the answer's business (stage 5, in `index.ts`): a stage sets it only when it knows better than the
 * receiver's setting.
 */
export interface Rejection {
  readonly stop: ReasonCode;
  readonly message?: string;
  readonly issues?: EventIssue[];
  readonly retryAfterSeconds?: number;
}

/**
 * A delivery acknowledged: its handlers ran here and the claim completed (200), the event is a duplicate (200),
 * a job engine or the executor took it (202), or its mode is ignored (200).
 */
export interface Acknowledgement {
  readonly ack: 'processed' | 'duplicate' | 'accepted' | 'ignored';
}

/** How a walk ends: acknowledged, or rejected with a reason. */
export type Ending = Acknowledgement | Rejection;

export const PROCESSED: Acknowledgement = { ack: 'processed' };
export const DUPLICATE: Acknowledgement = { ack: 'duplicate' };
export const ACCEPTED: Acknowledgement = { ack: 'accepted' };
export const IGNORED: Acknowledgement = { ack: 'ignored' };
export const SHUTTING_DOWN: Rejection = { stop: 'shutting_down' };
