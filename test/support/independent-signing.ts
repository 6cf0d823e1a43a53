import { createHmac } from 'node:crypto';
import { SECRET } from '../hardening/targets.js';

/**
 * The signature header for `body`, computed here with node:crypto and not with the library: the suite checks
 * the receiver against an independent implementation of the scheme (HMAC-SHA256 over "<t>." + body, hex).
 */
export function sign(body: string | Uint8Array, timestamp = Math.floor(Date.now() / 1000)): string {
  const digest = createHmac('sha256', SECRET).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

/** A JSON POST of `body` for receiver.receive() (or fetch), signed now by the independent implementation. */
export function signedDelivery(body: string): {
  method: 'POST';
  headers: Record<string, string>;
  rawBody: string;
} {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-signature': sign(body) },
    rawBody: body,
  };
}

/** Whether `header` carries a valid signature of `body` by the independent implementation, fresh in time. */
export function validlySigned(body: Uint8Array, header: string | undefined): boolean {
  if (header === undefined) return false;
  const fields = header.split(',').map((field) => field.trim().split('='));
  const times = fields.filter(([name]) => name === 't');
  if (times.length !== 1 || !/^\d+$/.test(times[0]?.[1] ?? '')) return false;
  const timestamp = Number(times[0]?.[1]);
  if (Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const expected = sign(body, timestamp).slice(`t=${timestamp},v1=`.length);
  return fields.some(([name, value]) => name === 'v1' && value === expected);
}

/** A request head for raw sockets: POST /webhooks with these headers (no Content-Length unless given). */
export function requestHead(
  headers: Record<string, string | number>,
  method = 'POST',
  path = '/webhooks',
): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines.join('')}\r\n`;
}
