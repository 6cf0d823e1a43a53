import { byteLength } from '../base/bytes.js';
import type { ReasonCode } from '../contract/reasons.js';
import { BODY_LENGTH_MISMATCH, BODY_TIMEOUT, BODY_TOO_LARGE } from '../contract/request.js';
import type { Delivery } from './delivery.js';

export type BodyFailure = Extract<
  ReasonCode,
  'request_aborted' | 'payload_too_large' | 'body_timeout' | 'content_length_mismatch' | 'body_already_parsed'
>;

/**
 * Reads the body within `maxBytes` and `deadlineMs`, streaming when the adapter gave a reader. On success the
 * raw body is on the delivery; anything that is not bytes or a string (a framework parsed it first) is
 * body_already_parsed.
 */
export function readBody(
  delivery: Delivery,
  maxBytes: number,
  deadlineMs: number,
): BodyFailure | undefined | Promise<BodyFailure | undefined> {
  const { request } = delivery;
  if (!request.readBody) return acceptBody(delivery, request.rawBody, maxBytes);
  return request.readBody(maxBytes, deadlineMs).then(
    (body) => acceptBody(delivery, body, maxBytes),
    () => 'request_aborted' as const,
  );
}

function acceptBody(delivery: Delivery, body: unknown, maxBytes: number): BodyFailure | undefined {
  if (body === BODY_TOO_LARGE) return 'payload_too_large';
  if (body === BODY_TIMEOUT) return 'body_timeout';
  if (body === BODY_LENGTH_MISMATCH) return 'content_length_mismatch';
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    delivery.notBytes = body;
    return 'body_already_parsed';
  }
  if (byteLength(body) > maxBytes) return 'payload_too_large';
  delivery.body = body;
  return undefined;
}
