import { expect } from 'vitest';
import type { Outcome, ReceiveRequest } from '../../src/index.js';
import { createSignedRequest } from '../../src/testing.js';

/** Shared plumbing of the processing tests: signed deliveries, gates that hold handlers open, polling. */

export const PROCESSING_SECRET = 'whsec_processing_7c1e9a2b5d4f8e3a6b0c';

/** The service's delivery of `event`, signed now (a retry is a fresh call: the service signs each attempt). */
export function signed(event: unknown): ReceiveRequest {
  const { body, headers } = createSignedRequest(event, { secret: PROCESSING_SECRET });
  return { method: 'POST', headers, rawBody: body };
}

/** A promise with its resolve exposed, to hold a handler open until the test says so. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Polls `condition` every 2 ms, failing after `timeoutMs`: waits for state without fixed sleeps. */
export async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export function expectRejected(outcome: Outcome, status: number, reason: string, retryAfter?: string) {
  expect({ status: outcome.status, reason: outcome.reason }).toEqual({ status, reason });
  expect(outcome.headers['retry-after']).toBe(retryAfter);
}

export function expectProcessed(outcome: Outcome, status: 200 | 202 = 200, duplicate = false) {
  expect({ status: outcome.status, reason: outcome.reason, duplicate: outcome.duplicate }).toEqual({
    status,
    reason: undefined,
    duplicate: duplicate ? true : undefined,
  });
}
