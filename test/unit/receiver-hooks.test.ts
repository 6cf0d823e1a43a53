import { describe, expect, expectTypeOf, it } from 'vitest';
import { reasonAnswers } from '../../src/contract/reasons.js';
import type { RejectionReason } from '../../src/index.js';
import {
  createReceiver,
  type DedupeStore,
  MemoryDedupeStore,
  type WebhookHandlerError,
  type WebhookRejection,
} from '../../src/index.js';
import { storeTimeout } from '../../src/stores/deadline.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';

function hooked(store?: DedupeStore) {
  const receiver = createReceiver({ secrets: SECRET, store: store ?? new MemoryDedupeStore() });
  const rejected: WebhookRejection[] = [];
  const errors: WebhookHandlerError[] = [];
  receiver.onRejected((rejection) => {
    expectTypeOf(rejection.reason).toEqualTypeOf<RejectionReason>();
    rejected.push(rejection);
  });
  receiver.onError((error) => {
    errors.push(error);
  });
  return { receiver, rejected, errors };
}

const claimFails = (cause: Error): DedupeStore => ({
  claim: () => Promise.reject(cause),
  complete: () => Promise.resolve(true),
  release: () => Promise.resolve(true),
  renew: () => Promise.resolve(true),
});

describe('onRejected: every 4xx answer, the sender’s problem', () => {
  it('401, 400, 405, 413, 415, 422: onRejected gets reason, status and the message the sender got; onError nothing', async () => {
    const { receiver, rejected, errors } = hooked();
    receiver.on('message.delivered', () => {});
    const outcomes = [
      await receiver.receive(delivery(deliveredEvent(), { secret: 'whsec_unit_wrong_secret_8e7d6c5b' })),
      await receiver.receive(delivery('{"not json')),
      await receiver.receive(delivery(deliveredEvent({ to: 42 }))),
      await receiver.receive(delivery(deliveredEvent(), { method: 'GET' })),
      await receiver.receive(delivery(deliveredEvent(), { headers: { 'content-type': 'text/plain' } })),
      await receiver.receive(delivery('x'.repeat(2_000_000))),
    ];
    expect(rejected.map((r) => `${r.status} ${r.reason}`)).toEqual([
      '401 signature_mismatch',
      '400 invalid_json',
      '422 invalid_event',
      '405 method_not_allowed',
      '415 unsupported_media_type',
      '413 payload_too_large',
    ]);
    for (const [index, outcome] of outcomes.entries()) {
      const told = rejected[index] as WebhookRejection;
      expect(told.requestId).toBe(outcome.requestId);
      expect(told.message).toBe(JSON.parse(outcome.body).error.message);
    }
    expect(rejected[0]?.diagnostics?.secretsTried).toEqual(['secrets[0]']);
    expect(rejected[2]?.message).toContain('data.to');
    expect(errors).toEqual([]);
  });

  it('a 5xx is no rejection: handler_failed goes to onError only; a throwing onRejected changes no answer', async () => {
    const { receiver, rejected, errors } = hooked();
    receiver.on('message.delivered', () => {
      throw new Error('the orders table is locked');
    });
    receiver.onRejected(() => {
      throw new Error('hook failed');
    });
    expect((await receiver.receive(delivery(deliveredEvent()))).status).toBe(500);
    expect(rejected).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['handler_failed']);
    expect((await receiver.receive(delivery(deliveredEvent(), { header: null }))).status).toBe(401);
    expect(rejected.map((r) => r.reason)).toEqual(['missing_signature']);
  });

  it('RejectionReason is exactly the reasons answered 4xx', () => {
    const fourHundreds: RejectionReason[] = [
      'missing_signature',
      'malformed_signature',
      'stale_timestamp',
      'future_timestamp',
      'signature_mismatch',
      'method_not_allowed',
      'unsupported_media_type',
      'unsupported_encoding',
      'payload_too_large',
      'request_aborted',
      'body_timeout',
      'content_length_mismatch',
      'invalid_json',
      'invalid_event',
      'event_in_progress',
      'unknown_tenant',
    ];
    const answered4xx = Object.entries(reasonAnswers)
      .filter(([, answer]) => answer.status < 500)
      .map(([reason]) => reason);
    expect(answered4xx.sort()).toEqual([...fourHundreds].sort());
  });
});

describe('onError: the error’s own message carries its cause', () => {
  it('a handler’s error: error.message says what the handler threw', async () => {
    const { receiver, errors } = hooked();
    receiver.on('message.delivered', () => {
      throw new TypeError('order 1234 not found');
    });
    await receiver.receive(delivery(deliveredEvent()));
    expect(errors[0]?.message).toMatch(
      /^A handler for message\.delivered failed; .* Cause: TypeError: order 1234 not found$/,
    );
  });

  it('a store past its deadline: error.message names the store and the deadline', async () => {
    const { receiver, errors } = hooked(claimFails(storeTimeout('The Redis store', 1000)));
    expect((await receiver.receive(delivery(deliveredEvent()))).status).toBe(503);
    expect(errors[0]?.message).toContain(
      'The dedupe store failed to claim an event. Cause: StoreTimeoutError: The Redis store did not answer within 1000 ms (operationTimeoutMs)',
    );
  });

  it('a connection string in the cause keeps its password out of the message', async () => {
    const cause = new Error('connect failed: postgres://app:s3cr3t-pw@db.internal:5432/app');
    const { receiver, errors } = hooked(claimFails(cause));
    await receiver.receive(delivery(deliveredEvent()));
    expect(errors[0]?.message).toContain('postgres://app:***@db.internal:5432/app');
    expect(errors[0]?.message).not.toContain('s3cr3t-pw');
  });
});
