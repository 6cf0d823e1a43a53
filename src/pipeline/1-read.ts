import { byteLength, type SignedPiece } from '../base/bytes.js';
import { RawBodyError } from '../base/errors.js';
import {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  getHeader,
  isJsonContentType,
  type ReceiveRequest,
} from '../contract/request.js';
import type { Rejection } from './ending.js';

/** A request as it arrives, under the id its answer and every log line carry. */
export interface Received {
  readonly request: ReceiveRequest;
  readonly requestId: string;
}

/** A request whose body was read: the raw body, exactly as received. */
export interface Read extends Received {
  readonly body: SignedPiece;
}

const NOT_POST: Rejection = { stop: 'method_not_allowed' };
const NOT_JSON: Rejection = { stop: 'unsupported_media_type' };
const ENCODED: Rejection = { stop: 'unsupported_encoding' };

/**
 * The cheap checks, before a byte of the body is read: a webhook is a POST of uncompressed JSON. A compressed
 * body is refused in every adapter alike, whether or not a framework's parser inflated it already.
 */
export function checkRequest(received: Received): Rejection | undefined {
  const { request } = received;
  const method = request?.method;
  if (method !== 'POST' && (typeof method !== 'string' || method.toUpperCase() !== 'POST')) return NOT_POST;
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) return NOT_JSON;
  const encoding = getHeader(request.headers, 'content-encoding');
  if (encoding !== undefined && !isIdentity(encoding)) return ENCODED;
  return undefined;
}

/** `identity`, or no coding at all (an empty value, or a list of only `identity`). */
function isIdentity(encoding: string): boolean {
  for (const coding of encoding.split(',')) {
    const name = coding.trim().toLowerCase();
    if (name !== '' && name !== 'identity') return false;
  }
  return true;
}

/**
 * Reads the body within `maxBytes` and `deadlineMs`, streaming when the adapter gave a reader. Anything that is
 * not bytes or a string (a framework parsed it first) is body_already_parsed, and the message names what came.
 */
export async function readBody(
  received: Received,
  maxBytes: number,
  deadlineMs: number,
): Promise<Read | Rejection> {
  const { request } = received;
  if (!request.readBody) return acceptBody(received, request.rawBody, maxBytes);
  let body: unknown;
  try {
    body = await request.readBody(maxBytes, deadlineMs);
  } catch {
    return REQUEST_ABORTED;
  }
  return acceptBody(received, body, maxBytes);
}

const REQUEST_ABORTED: Rejection = { stop: 'request_aborted' };

function acceptBody(received: Received, body: unknown, maxBytes: number): Read | Rejection {
  if (body === BODY_TOO_LARGE) return { stop: 'payload_too_large' };
  if (body === BODY_TIMEOUT) return { stop: 'body_timeout' };
  if (body === BODY_LENGTH_MISMATCH) return { stop: 'content_length_mismatch' };
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    const { message } = new RawBodyError(body, received.request.rawBodyHint);
    return { stop: 'body_already_parsed', message };
  }
  if (byteLength(body) > maxBytes) return { stop: 'payload_too_large' };
  // Each step is a literal of one fixed shape, never a spread of the step before: V8 keeps one hidden class.
  return { request: received.request, requestId: received.requestId, body };
}
