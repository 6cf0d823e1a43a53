import { describe, expect, it } from 'vitest';
import { BODY_TOO_LARGE, type BodyRead } from '../../src/adapter.js';
import {
  createReceiver,
  type DedupeStore,
  type ErrorContext,
  MemoryDedupeStore,
  type ReceiverOptions,
  type WebhookHandlerError,
} from '../../src/index.js';
import { gate } from '../support/gate.js';
import {
  type DeliveryOptions,
  deliveredEvent,
  delivery,
  expectAccepted,
  expectRejected,
  nowSeconds,
  SECRET,
} from '../support/unit.js';
import { until } from '../support/until.js';

const receiverWith = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({ secrets: SECRET, store: new MemoryDedupeStore(), ...options });

/** Every row of the HTTP contract (one status and reason code per situation), reached through receive() with the memory store. */
describe('receiver outcomes', () => {
  it('200: processed, handler called once with the typed event and its context', async () => {
    const receiver = receiverWith();
    const seen: unknown[] = [];
    receiver.on('message.delivered', (event, ctx) => {
      seen.push([event.data.message_id, ctx.mode, ctx.dedupeKey, ctx.requestId]);
    });
    const event = deliveredEvent();
    const outcome = await receiver.receive(delivery(event));
    expectAccepted(outcome, 200);
    expect(outcome.event).toEqual({ id: event.id, type: 'message.delivered' });
    expect(outcome.mode).toBe('live');
    expect(seen).toEqual([[event.data.message_id, 'live', `live:${event.id}`, outcome.requestId]]);
  });

  it('200 duplicate: a completed event is acknowledged and not handled again', async () => {
    const receiver = receiverWith();
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
    });
    const event = deliveredEvent();
    expectAccepted(await receiver.receive(delivery(event)), 200);
    const again = await receiver.receive(delivery(event, { timestamp: nowSeconds() + 1 }));
    expectAccepted(again, 200, true);
    expect(again.duplicate).toBe(true);
    expect(calls).toBe(1);
  });

  it('202: ack async answers once claimed, hands the work to waitUntil, and the handler still runs', async () => {
    const receiver = receiverWith({ ack: 'async' });
    const held = gate();
    const done = gate();
    receiver.on('message.delivered', async () => {
      await held.opened;
      done.open();
    });
    const kept: Promise<unknown>[] = [];
    const outcome = await receiver.receive({
      ...delivery(deliveredEvent()),
      waitUntil: (work) => kept.push(work),
    });
    expectAccepted(outcome, 202);
    expect(kept).toHaveLength(1);
    held.open();
    await done.opened;
    await kept[0];
  });

  it('405 + Allow: only POST', async () => {
    for (const method of ['GET', 'PUT', 'HEAD']) {
      const outcome = await receiverWith().receive(delivery(deliveredEvent(), { method }));
      expectRejected(outcome, 405, 'method_not_allowed');
      expect(outcome.headers.allow).toBe('POST');
    }
  });

  it('415: not a JSON content type (the body is never read)', async () => {
    let read = false;
    const outcome = await receiverWith().receive({
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      readBody: async () => {
        read = true;
        return '{}';
      },
    });
    expectRejected(outcome, 415, 'unsupported_media_type');
    expect(read).toBe(false);
    const missing = await receiverWith().receive({ method: 'POST', headers: {}, rawBody: '{}' });
    expectRejected(missing, 415, 'unsupported_media_type');
  });

  it('415: a Content-Encoding other than identity, before the body is read, whatever the body holds', async () => {
    const event = deliveredEvent();
    for (const encoding of ['gzip', 'deflate', 'br', 'GZIP', 'identity, gzip', 'x-unknown']) {
      // The signature is over the JSON and the body is the JSON, as a framework that inflated it would pass it.
      const outcome = await receiverWith().receive(
        delivery(event, { headers: { 'content-encoding': encoding } }),
      );
      expectRejected(outcome, 415, 'unsupported_encoding');
    }
    for (const encoding of ['identity', 'Identity', '']) {
      const outcome = await receiverWith().receive(
        delivery(event, { headers: { 'content-encoding': encoding } }),
      );
      expectAccepted(outcome, 200);
    }
  });

  it('413: a body over maxBodyBytes, given whole or stopped by the reader', async () => {
    const receiver = receiverWith({ maxBodyBytes: 64 });
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 413, 'payload_too_large');
    let limit = 0;
    const streamed = await receiver.receive({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      readBody: async (max): Promise<BodyRead> => {
        limit = max;
        return BODY_TOO_LARGE;
      },
    });
    expectRejected(streamed, 413, 'payload_too_large');
    expect(limit).toBe(64);
    expect(receiver.limits.maxBodyBytes).toBe(64);
  });

  it('400 request_aborted: the client went away while the body streamed in', async () => {
    const outcome = await receiverWith().receive({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      readBody: () => Promise.reject(new Error('aborted')),
    });
    expectRejected(outcome, 400, 'request_aborted');
  });

  // The timestamps are an hour off, not a second past the tolerance: the cases are built when the file loads,
  // and a slow machine may take seconds to reach them.
  const signatureCases: [string, DeliveryOptions][] = [
    ['missing_signature', { header: null }],
    ['malformed_signature', { header: 't=12a,v1=00' }],
    ['stale_timestamp', { timestamp: nowSeconds() - 3600 }],
    ['future_timestamp', { timestamp: nowSeconds() + 3600 }],
    ['signature_mismatch', { secret: 'whsec_some_other_endpoint' }],
  ];
  for (const [reason, options] of signatureCases) {
    it(`401 ${reason}`, async () => {
      const receiver = receiverWith();
      let calls = 0;
      receiver.onAny(() => {
        calls++;
      });
      const outcome = await receiver.receive(delivery(deliveredEvent(), options));
      expectRejected(outcome, 401, reason);
      expect(outcome.event).toBeUndefined();
      expect(calls).toBe(0);
    });
  }

  it('400 invalid_json: verified bytes that are not JSON', async () => {
    expectRejected(await receiverWith().receive(delivery('{"id": evt_')), 400, 'invalid_json');
  });

  it('422 invalid_event: lists the paths of the issues, never the values', async () => {
    const secretish = 'DISTINCTIVE-VALUE-7731';
    const event = deliveredEvent({ to: secretish, operator: '' }, { created_at: `not-a-date-${secretish}` });
    const outcome = await receiverWith().receive(delivery(event));
    const error = expectRejected(outcome, 422, 'invalid_event');
    expect(outcome.body).not.toContain(secretish);
    expect(error.message).toContain('data.to');
    expect(error.message).toContain('data.operator');
    expect(error.message).toContain('created_at');
    const paths = (error.issues as { path: string }[]).map((issue) => issue.path).sort();
    expect(paths).toEqual(['created_at', 'data.operator', 'data.to']);
    for (const issue of error.issues as Record<string, unknown>[]) {
      expect(Object.keys(issue).sort()).toEqual(['code', 'message', 'path']);
    }
  });

  it('422 invalid_event: a body that is JSON but not an object', async () => {
    const error = expectRejected(await receiverWith().receive(delivery('[1,2]')), 422, 'invalid_event');
    expect(error.message).toContain('(body)');
  });

  it('409 + Retry-After: the same event is claimed elsewhere right now', async () => {
    const store = new MemoryDedupeStore();
    const receiver = receiverWith({ store });
    const event = deliveredEvent();
    await store.claim(`live:${event.id}`, 30_000);
    const outcome = await receiver.receive(delivery(event));
    expectRejected(outcome, 409, 'event_in_progress');
    expect(Number(outcome.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(Number(outcome.headers['retry-after'])).toBeLessThanOrEqual(30);
  });

  it('500 handler_failed: neither the message nor the stack of the handler error reaches the client', async () => {
    const receiver = receiverWith();
    const told: [WebhookHandlerError, ErrorContext][] = [];
    receiver.onError((error, ctx) => {
      told.push([error, ctx]);
    });
    receiver.on('message.delivered', () => {
      throw new Error('db password hunter2 rejected at /srv/app/handlers.ts:42');
    });
    const event = deliveredEvent();
    const outcome = await receiver.receive(delivery(event));
    expectRejected(outcome, 500, 'handler_failed');
    expect(outcome.body).not.toContain('hunter2');
    expect(outcome.body).not.toContain('handlers.ts');
    expect(outcome.body).not.toContain(' at ');
    expect(told).toHaveLength(1);
    const [error, ctx] = told[0] as [WebhookHandlerError, ErrorContext];
    expect(error.code).toBe('handler_failed');
    expect((error.cause as Error).message).toContain('hunter2');
    expect(ctx).toMatchObject({ requestId: outcome.requestId, eventId: event.id, mode: 'live' });
  });

  it('500 handler_failed with several failing handlers: onError gets every error in one AggregateError', async () => {
    const receiver = receiverWith();
    const told: [WebhookHandlerError, ErrorContext][] = [];
    receiver.onError((error, ctx) => {
      told.push([error, ctx]);
    });
    let succeeded = 0;
    receiver.on('message.delivered', () => {
      throw new Error('first');
    });
    receiver.on('message.delivered', async () => {
      succeeded++;
    });
    receiver.onAny(async () => {
      throw new Error('second');
    });
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 500, 'handler_failed');
    expect(succeeded).toBe(1);
    expect(told).toHaveLength(1);
    const [error, ctx] = told[0] as [WebhookHandlerError, ErrorContext];
    expect(error.cause).toBeInstanceOf(AggregateError);
    expect((error.cause as AggregateError).errors.map((each: Error) => each.message)).toEqual([
      'first',
      'second',
    ]);
    expect(ctx.reason).toBe('handler_failed');
  });

  it('a store failure while settling is one failure with one reason: the error and its context agree', async () => {
    const memory = new MemoryDedupeStore();
    const store: DedupeStore = {
      claim: (key, leaseMs) => memory.claim(key, leaseMs),
      complete: () => Promise.reject(new Error('connection reset')),
      renew: (key, token, leaseMs) => memory.renew(key, token, leaseMs),
      release: (key, token) => memory.release(key, token),
    };
    const receiver = receiverWith({ store });
    const told: string[] = [];
    receiver.onError((error, ctx) => {
      told.push(`${error.code}/${ctx.reason}`);
    });
    receiver.on('message.delivered', () => {});
    expectAccepted(await receiver.receive(delivery(deliveredEvent())), 200);
    expect(told).toEqual(['store_unavailable/store_unavailable']);
  });

  it('500 body_already_parsed: a parsed object instead of the raw body, and onError is told', async () => {
    const receiver = receiverWith();
    const told: ErrorContext[] = [];
    receiver.onError((_error, ctx) => {
      told.push(ctx);
    });
    const outcome = await receiver.receive({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-signature': 't=1,v1=00' },
      rawBody: deliveredEvent(),
    });
    const error = expectRejected(outcome, 500, 'body_already_parsed');
    expect(error.message).toContain('express.raw');
    expect(error.message).not.toContain('msg_');
    expect(told).toEqual([{ requestId: outcome.requestId, reason: 'body_already_parsed' }]);
  });

  it('503 store_unavailable + Retry-After: the store cannot claim; nothing runs', async () => {
    const failing: DedupeStore = {
      claim: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379')),
      complete: () => Promise.resolve(true),
      release: () => Promise.resolve(true),
      renew: () => Promise.resolve(true),
    };
    const receiver = receiverWith({ store: failing, retryAfterSeconds: 7 });
    let calls = 0;
    receiver.onAny(() => {
      calls++;
    });
    const told: string[] = [];
    receiver.onError((error) => {
      told.push(error.code);
    });
    const outcome = await receiver.receive(delivery(deliveredEvent()));
    expectRejected(outcome, 503, 'store_unavailable');
    expect(outcome.headers['retry-after']).toBe('7');
    expect(outcome.body).not.toContain('ECONNREFUSED');
    expect(calls).toBe(0);
    expect(told).toEqual(['store_unavailable']);
  });

  it('503 overloaded + Retry-After: the queue is full; the turned-away event stays unclaimed', async () => {
    const store = new MemoryDedupeStore();
    const receiver = receiverWith({ store, concurrency: 1, maxQueue: 1 });
    const held = gate();
    const started = gate();
    receiver.on('message.delivered', async () => {
      started.open();
      await held.opened;
    });
    const running = receiver.receive(delivery(deliveredEvent()));
    await started.opened;
    const queued = receiver.receive(delivery(deliveredEvent()));
    await until(() => receiver.metrics().queue.waiting === 1);
    const turnedAway = deliveredEvent();
    const outcome = await receiver.receive(delivery(turnedAway));
    expectRejected(outcome, 503, 'overloaded');
    expect(outcome.headers['retry-after']).toBe('5');
    held.open();
    expectAccepted(await running, 200);
    expectAccepted(await queued, 200);
    expectAccepted(await receiver.receive(delivery(turnedAway)), 200);
  });

  it('503 shutting_down + Retry-After: after close()', async () => {
    const receiver = receiverWith();
    await receiver.close();
    const outcome = await receiver.receive(delivery(deliveredEvent()));
    expectRejected(outcome, 503, 'shutting_down');
    expect(outcome.headers['retry-after']).toBe('5');
  });

  it('503 handler_timeout: handlers still running past handlerTimeoutMs; they go on and settle', async () => {
    const store = new MemoryDedupeStore();
    const receiver = receiverWith({ store, handlerTimeoutMs: 20 });
    const held = gate();
    receiver.on('message.delivered', () => held.opened);
    const event = deliveredEvent();
    const outcome = await receiver.receive(delivery(event));
    expectRejected(outcome, 503, 'handler_timeout');
    held.open();
    await receiver.close();
    const retry = await receiverWith({ store }).receive(delivery(event));
    expectAccepted(retry, 200, true);
  });
});
