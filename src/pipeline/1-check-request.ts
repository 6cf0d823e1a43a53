import { getHeader, isJsonContentType } from '../contract/request.js';
import type { Delivery } from './delivery.js';

/** The cheap checks, before a byte of the body is read: a webhook is a POST of JSON. */
export function checkRequest(
  delivery: Delivery,
): 'method_not_allowed' | 'unsupported_media_type' | undefined {
  const { request } = delivery;
  if (typeof request?.method !== 'string' || request.method.toUpperCase() !== 'POST')
    return 'method_not_allowed';
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) return 'unsupported_media_type';
  return undefined;
}
