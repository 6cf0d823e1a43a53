import { getHeader, isJsonContentType, type ReceiveRequest } from '../contract/request.js';
import type { Stop } from './stop.js';

/** A request as it arrives, under the id its answer and every log line carry. */
export interface Received {
  readonly request: ReceiveRequest;
  readonly requestId: string;
}

const NOT_POST: Stop = { stop: 'method_not_allowed' };
const NOT_JSON: Stop = { stop: 'unsupported_media_type' };

/** The cheap checks, before a byte of the body is read: a webhook is a POST of JSON. */
export function checkRequest(received: Received): Received | Stop {
  const { request } = received;
  const method = request?.method;
  if (method !== 'POST' && (typeof method !== 'string' || method.toUpperCase() !== 'POST')) return NOT_POST;
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) return NOT_JSON;
  return received;
}
