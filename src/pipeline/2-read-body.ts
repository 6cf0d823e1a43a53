import { byteLength, type SignedPiece } from '../base/bytes.js';
import { RawBodyError } from '../base/errors.js';
import { BODY_LENGTH_MISMATCH, BODY_TIMEOUT, BODY_TOO_LARGE } from '../contract/request.js';
import type { Received } from './1-check-request.js';
import type { Stop } from './stop.js';

/** A request whose body was read: the raw body, exactly as received. */
export interface Read extends Received {
  readonly body: SignedPiece;
}

/**
 * Reads the body within `maxBytes` and `deadlineMs`, streaming when the adapter gave a reader. Anything that is
 * not bytes or a string (a framework parsed it first) is body_already_parsed, and the message names what came.
 */
export function readBody(
  received: Received,
  maxBytes: number,
  deadlineMs: number,
): Read | Stop | Promise<Read | Stop> {
  const { request } = received;
  if (!request.readBody) return acceptBody(received, request.rawBody, maxBytes);
  const body = request.readBody(maxBytes, deadlineMs);
  if (typeof (body as PromiseLike<unknown> | undefined)?.then !== 'function') {
    return acceptBody(received, body, maxBytes);
  }
  return Promise.resolve(body as PromiseLike<unknown>).then(
    (read) => acceptBody(received, read, maxBytes),
    (): Stop => ({ stop: 'request_aborted' }),
  );
}

function acceptBody(received: Received, body: unknown, maxBytes: number): Read | Stop {
  if (body === BODY_TOO_LARGE) return { stop: 'payload_too_large' };
  if (body === BODY_TIMEOUT) return { stop: 'body_timeout' };
  if (body === BODY_LENGTH_MISMATCH) return { stop: 'content_length_mismatch' };
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    const { message } = new RawBodyError(body, received.request.rawBodyHint);
    return { stop: 'body_already_parsed', message };
  }
  if (byteLength(body) > maxBytes) return { stop: 'payload_too_large' };
  // Each step is a literal of one fixed shape: spreading the step before cost a few µs per request on a server.
  return { request: received.request, requestId: received.requestId, body };
}
