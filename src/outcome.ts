import { type ReasonCode, reasonMessage, reasonStatus } from './errors.js';
import type { EventIssue } from './events.js';
import type { Mode } from './secrets.js';

/** What the receiver decided; an adapter writes status, headers and body back as they are. */
export interface Outcome {
  status: number;
  headers: Record<string, string>;
  /** JSON text. */
  body: string;
  requestId: string;
  /** Set on every rejection. */
  reason?: ReasonCode;
  /** Set once the event was parsed. */
  event?: { id?: string; type: string };
  mode?: Mode;
  duplicate?: boolean;
}

export const REQUEST_ID_HEADER = 'x-request-id';

const RECEIVED = '{"received":true}';
const DUPLICATE = '{"received":true,"duplicate":true}';

export function acceptedOutcome(requestId: string, status: 200 | 202, duplicate = false): Outcome {
  return {
    status,
    headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId },
    body: duplicate ? DUPLICATE : RECEIVED,
    requestId,
    ...(duplicate ? { duplicate } : {}),
  };
}

export interface RejectionDetails {
  message?: string;
  retryAfterSeconds?: number;
  issues?: EventIssue[];
  headers?: Record<string, string>;
}

/** A rejection in the service's own error shape: {"error":{"code","message","request_id"}}. */
export function rejectedOutcome(
  reason: ReasonCode,
  requestId: string,
  details: RejectionDetails = {},
): Outcome {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [REQUEST_ID_HEADER]: requestId,
    ...details.headers,
  };
  if (details.retryAfterSeconds !== undefined) headers['retry-after'] = String(details.retryAfterSeconds);
  const error: Record<string, unknown> = {
    code: reason,
    message: details.message ?? reasonMessage[reason],
    request_id: requestId,
  };
  if (details.issues) error.issues = details.issues;
  return { status: reasonStatus[reason], headers, body: JSON.stringify({ error }), requestId, reason };
}
