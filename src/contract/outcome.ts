import { byteLength } from '../base/bytes.js';
import type { EventIssue } from '../events/catalogue.js';
import type { Mode } from './context.js';
import { type ReasonCode, reasonAnswers } from './reasons.js';

/** What the receiver decided; an adapter writes status, headers and body back as they are. */
export interface Outcome {
  status: number;
  /**
   * Lower-case names. Always content-type, content-length and x-request-id: a sized answer goes out in one
   * write where a framework would otherwise stream it chunked.
   */
  headers: Record<string, string>;
  /** JSON text. */
  body: string;
  requestId: string;
  /** Set on every rejection. */
  reason?: ReasonCode;
  /** Set once the event was parsed. */
  event?: { id?: string; type: string };
  mode?: Mode;
  /** With the receiver's `tenant` option: the tenant the request named. */
  tenant?: string;
  duplicate?: boolean;
  /** Verified, and signed with a secret of a mode the `modes` option ignores: answered 200, no handler ran. */
  ignored?: boolean;
}

export const REQUEST_ID_HEADER = 'x-request-id';

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
    message: details.message ?? reasonAnswers[reason].message,
    request_id: requestId,
  };
  if (details.issues) error.issues = details.issues;
  const body = JSON.stringify({ error });
  headers['content-length'] = String(byteLength(body));
  return { status: reasonAnswers[reason].status, headers, body, requestId, reason };
}

/**
 * The outcome's headers for a platform that owns the connection and frames the body itself (Lambda, Azure
 * Functions): all but `connection` and `content-length`.
 */
export function hostedHeaders(outcome: Outcome): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in outcome.headers) {
    if (name !== 'connection' && name !== 'content-length') headers[name] = outcome.headers[name] as string;
  }
  return headers;
}
