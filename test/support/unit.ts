import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { Outcome, ReceiveRequest } from '../../src/adapter.js';
import { signPayload } from '../../src/signature/index.js';

/** Shared plumbing of the unit tests: signed deliveries and the checks of what the receiver answers. */

export const SECRET = 'whsec_unit_4f1c2d9e8b7a6f5e4d3c2b1a';
export const TEST_SECRET = 'whsec_unit_test_mode_0a9b8c7d6e5f';

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let counter = 0;

/** `prefix` + 26 characters, unique within the run (the service's id style). */
export function uniqueId(prefix: string): string {
  let n = ++counter;
  let tail = '';
  for (let i = 0; i < 10; i++) {
    tail = (ULID[n % 32] as string) + tail;
    n = Math.floor(n / 32);
  }
  return `${prefix}01JD8Z6Q2W3E4R5T${tail}`;
}

export function deliveredEvent(data: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) {
  return {
    id: uniqueId('evt_'),
    type: 'message.delivered',
    created_at: '2026-11-21T10:00:00+00:00',
    data: { message_id: uniqueId('msg_'), to: '+15551234567', operator: 'op_vodafone_de', ...data },
    ...envelope,
  };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export interface DeliveryOptions {
  secret?: string;
  timestamp?: number;
  /** Replaces the signature header value (or removes it when null). */
  header?: string | null;
  headers?: Record<string, string>;
  method?: string;
}

/** A POST the way the service sends it: body serialized once, those exact bytes signed. */
export function delivery(event: unknown, options: DeliveryOptions = {}): ReceiveRequest {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const signature =
    options.header !== undefined
      ? options.header
      : signPayload({ payload: body, secret: options.secret ?? SECRET, timestamp: options.timestamp });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (signature !== null) headers['webhook-signature'] = signature;
  return { method: options.method ?? 'POST', headers, rawBody: new TextEncoder().encode(body) };
}

/**
 * A rejection: the status, the reason code, the service's error shape with the request id in body and header,
 * and `Retry-After` when given. Returns the error object.
 */
export function expectRejected(outcome: Outcome, status: number, code: string, retryAfter?: string) {
  expect({ status: outcome.status, reason: outcome.reason }).toEqual({ status, reason: code });
  expect(outcome.headers['content-type']).toBe('application/json');
  if (retryAfter !== undefined) expect(outcome.headers['retry-after']).toBe(retryAfter);
  const requestId = outcome.headers['x-request-id'];
  expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
  expect(outcome.requestId).toBe(requestId);
  const body = JSON.parse(outcome.body) as {
    error: { code: string; message: string; request_id: string; issues?: unknown[] };
  };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(body.error.request_id).toBe(requestId);
  expect(Object.keys(body.error).sort()).toEqual(
    body.error.issues ? ['code', 'issues', 'message', 'request_id'] : ['code', 'message', 'request_id'],
  );
  return body.error;
}

/** An acknowledgement: 200 (processed, or a duplicate) or 202 (async ack), with the body that says which. */
export function expectAccepted(outcome: Outcome, status: 200 | 202 = 200, duplicate = false) {
  expect({ status: outcome.status, reason: outcome.reason, duplicate: outcome.duplicate }).toEqual({
    status,
    reason: undefined,
    duplicate: duplicate ? true : undefined,
  });
  expect(outcome.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
  expect(JSON.parse(outcome.body)).toEqual(
    duplicate ? { received: true, duplicate: true } : { received: true },
  );
}

/** A case of the shared signature vectors (test/fixtures/signatures.json, made by an independent signer). */
export interface VectorCase {
  name: string;
  payload: string;
  header: string;
  secrets?: string[];
  secrets_hex?: string[];
  tolerance: number;
  now: number;
  expect: { valid: boolean; reason?: string };
}

export const vectorCases: readonly VectorCase[] = (
  JSON.parse(readFileSync(new URL('../fixtures/signatures.json', import.meta.url), 'utf8')) as {
    cases: VectorCase[];
  }
).cases;

/** A case's secrets: as text, or as raw key bytes given in hex. */
export const vectorSecrets = (c: VectorCase): (string | Uint8Array)[] =>
  c.secrets ?? (c.secrets_hex ?? []).map((hex) => new Uint8Array(Buffer.from(hex, 'hex')));
