import { describe, expect, it, vi } from 'vitest';
import { receiveNow } from '../../src/contract/receive-now.js';
import type { TraceSpan, Tracing } from '../../src/contract/tracing.js';
import { createReceiver, MemoryDedupeStore, type WebhookHandlerError } from '../../src/index.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';

const receiverWith = (options: { tracing?: Tracing } = {}) =>
  createReceiver({ secrets: SECRET, store: new MemoryDedupeStore(), ...options });

/** A tracer with a bug: starting the claim's span throws, after the request was admitted. */
function brokenTracing(): Tracing {
  const span: TraceSpan = {
    setAttributes() {},
    child(name) {
      if (name === 'claim') throw new Error('tracer bug');
      return span;
    },
    inContext: (fn) => fn(),
    carrier: () => ({}),
    fail() {},
    end() {},
  };
  return { startDelivery: () => span, startJob: () => span };
}

/** Adapters take the outcome at once when nothing waited; receive() stays a promise for everyone else. */
describe('receiving without a promise when nothing waits', () => {
  it('a walk that never waited (memory store, a handler that returns nothing) gives the outcome itself', async () => {
    const receiver = receiverWith();
    const seen: string[] = [];
    receiver.on('message.delivered', (event) => {
      seen.push(event.data.message_id);
    });
    const event = deliveredEvent();
    const outcome = receiveNow(receiver, delivery(event));
    expect(outcome).not.toBeInstanceOf(Promise);
    expectAccepted(await outcome, 200);
    expect(seen).toEqual([event.data.message_id]);
    // The request left the admission at once: close() has nothing to wait for.
    await receiver.close({ timeoutMs: 0 });
  });

  it('a handler that returns a promise makes it a promise, and the outcome waits for the handler', async () => {
    const receiver = receiverWith();
    let finish = () => {};
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (finish = resolve)));
    const outcome = receiveNow(receiver, delivery(deliveredEvent()));
    expect(outcome).toBeInstanceOf(Promise);
    finish();
    expectAccepted(await outcome, 200);
  });

  it('receive() always returns a native promise, also for a walk that never waited', async () => {
    const receiver = receiverWith();
    const answered = receiver.receive(delivery(deliveredEvent()));
    expect(answered).toBeInstanceOf(Promise);
    expectAccepted(await answered, 200);
    const refused = receiver.receive({ method: 'GET', headers: {} });
    expect(refused).toBeInstanceOf(Promise);
    expectRejected(await refused, 405, 'method_not_allowed');
  });

  it('a receive() replaced after creation (a spy, a decorator) is the one called', async () => {
    const receiver = receiverWith();
    const spy = vi.spyOn(receiver, 'receive');
    const outcome = receiveNow(receiver, delivery(deliveredEvent()));
    expect(outcome).toBeInstanceOf(Promise);
    expectAccepted(await outcome, 200);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('a bug thrown while the walk runs at once is answered 500 handler_failed, and close() still resolves', async () => {
    const receiver = receiverWith({ tracing: brokenTracing() });
    const errors: WebhookHandlerError[] = [];
    receiver.onError((error) => {
      errors.push(error);
    });
    const outcome = await receiver.receive(delivery(deliveredEvent()));
    expectRejected(outcome, 500, 'handler_failed');
    expect(errors.map((error) => [error.code, error.message])).toEqual([
      ['handler_failed', 'Unexpected receiver error. Cause: tracer bug'],
    ]);
    // The admitted request left the admission though its walk threw: close() does not wait for it.
    await receiver.close({ timeoutMs: 0 });
  });
});
