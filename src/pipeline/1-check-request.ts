import { getHeader, isJsonContentType, type ReceiveRequest } from '../contract/request.js';
import type { Stop } from './stop.js';

/** A request as it arrives, under the id its answer and every log line carry. */
export interface Received {
  readonly request: ReceiveRequest;
  readonly requestId: string;
}

const NOT_POST: Stop = { stop: 'method_not_allowed' };
const NOT_JSON: Stop = { stop: 'unsupported_media_type' };
const ENCODED: Stop = { stop: 'unsupported_encoding' };

/**
 * The cheap checks, before a byte of the body is read: a webhook is a POST of uncompressed JSON. A compressed
 * body is refused in every adapter alike, whether or not a framework's parser inflated it already.
 */
export function checkRequest(received: Received): Received | Stop {
  const { request } = received;
  const method = request?.method;
  if (method !== 'POST' && (typeof method !== 'string' || method.toUpperCase() !== 'POST')) return NOT_POST;
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) return NOT_JSON;
  const encoding = getHeader(request.headers, 'content-encoding');
  if (encoding !== undefined && !isIdentity(encoding)) return ENCODED;
  return received;
}

/** `identity`, or no coding at all (an empty value, or a list of only `identity`). */
function isIdentity(encoding: string): boolean {
  for (const coding of encoding.split(',')) {
    const name = coding.trim().toLowerCase();
    if (name !== '' && name !== 'identity') return false;
  }
  return true;
}
