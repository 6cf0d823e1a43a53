import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver, type WebhookHandlerError } from '../../src/index.js';
import type { DedupeStore } from '../../src/stores/types.js';
import { createEvent } from '../../src/testing.js';
import { SECRET } from '../hardening/targets.js';
import { signedDelivery } from '../support/independent-signing.js';

/** How the wrapped store misbehaves on claim, or `ok` to pass every call through. */
type Fault =
  | 'ok'
  | 'throws'
  | 'plain'
  | 'unknown-status'
  | 'never'
  | 'rejects-late'
  | 'undefined'
  | 'null'
  | 'number'
  | 'no-status'
  | 'thenable-undefined';

/**
 * A Promises/A+ thenable that is not a native Promise, and whose `then` gives another such thenable (as
 * Bluebird, or an instrumentation wrapper, answers). The receiver must treat it as the promise it stands for.
 */
function thenable<T>(promise: Promise<T>): PromiseLike<T> {
  return {
    // biome-ignore lint/suspicious/noThenProperty: the point is an object that is a thenable and nothing more
    then: (onFulfilled, onRejected) => thenable(promise.then(onFulfilled, onRejected)),
  };
}

/** `store` as a user's wrapper of it might answer: through thenables, and with `fault` on claim. */
function wrapped(store: DedupeStore<unknown>, fault: { now: Fault }): DedupeStore {
  const through = <T>(work: () => Promise<T>) => thenable(work()) as Promise<T>;
  return {
    claim(key, leaseMs) {
      switch (fault.now) {
        case 'throws':
          throw new Error('claim blew up synchronously');
        case 'plain':
          return { status: 'duplicate' } as unknown as Promise<never>;
        case 'unknown-status':
          return through(async () => ({ status: 'maybe' }) as never);
        case 'never':
          return new Promise<never>(() => {});
        case 'undefined':
          return undefined as never;
        case 'null':
          return null as never;
        case 'number':
          return 42 as never;
        case 'no-status':
          return { token: 'not a result' } as never;
        case 'thenable-undefined':
          return through(async () => undefined as never);
        default:
          return through(() => store.claim(key, leaseMs));
      }
    },
    complete: (key, token, retentionMs) => through(() => store.complete(key, token, retentionMs)),
    renew: (key, token, leaseMs) => through(() => store.renew(key, token, leaseMs)),
    release: (key, token) => through(() => store.release(key, token)),
  };
}

async function deliver(receiver: ReturnType<typeof createReceiver>, event: object) {
  const outcome = await receiver.receive(signedDelivery(JSON.stringify(event)));
  return { status: outcome.status, reason: outcome.reason, duplicate: outcome.duplicate };
}

/**
 * The receiver over a store that answers in any of the ways user code may: thenables that are not native
 * promises, a synchronous throw, a plain value, a result of no known shape, no answer at all. Every store runs
 * it, so every store (and every wrapper of one) meets it.
 */
export function describeStoreContract(name: string, setup: () => { store: DedupeStore<unknown> }): void {
  describe(`${name} store under a receiver, answering in any shape`, () => {
    const STORE_TIMEOUT_MS = 200;
    const make = (fault: { now: Fault }) => {
      const errors: WebhookHandlerError[] = [];
      const ran: string[] = [];
      const receiver = createReceiver({
        secrets: SECRET,
        store: wrapped(setup().store, fault),
        concurrency: 1,
        maxQueue: 1,
        storeTimeoutMs: STORE_TIMEOUT_MS,
      });
      receiver.onAny((event) => {
        ran.push(String(event.id));
      });
      receiver.onError((error) => {
        errors.push(error);
      });
      return { receiver, errors, ran };
    };
    const freshEvent = () => createEvent('message.delivered', { id: `evt_contract_${randomUUID()}` });

    it('works through thenables that are not native promises: processed once, then a duplicate', async () => {
      const { receiver, ran, errors } = make({ now: 'ok' });
      const event = freshEvent();
      expect(await deliver(receiver, event)).toMatchObject({ status: 200 });
      expect(await deliver(receiver, event)).toMatchObject({ status: 200, duplicate: true });
      expect(ran).toEqual([event.id]);
      expect(errors).toEqual([]);
      await receiver.close({ timeoutMs: 1000 });
    });

    it.each([
      ['throws synchronously', 'throws', /claim blew up synchronously/],
      ['resolves a status it does not know', 'unknown-status', /claim\(\) resolved \{ status: "maybe"/],
      ['returns undefined', 'undefined', /claim\(\) resolved undefined/],
      ['returns null', 'null', /claim\(\) resolved null/],
      ['returns a number', 'number', /claim\(\) resolved a number/],
      ['returns an object with no status', 'no-status', /claim\(\) resolved an object with no known status/],
      ['answers a thenable of undefined', 'thenable-undefined', /claim\(\) resolved undefined/],
    ] as const)(
      'a claim that %s: 503 store_unavailable, onError told, nothing held',
      async (_, fault, told) => {
        const state: { now: Fault } = { now: fault };
        const { receiver, errors, ran } = make(state);
        // More than concurrency + maxQueue: a delivery that kept its place would turn later ones away.
        for (let i = 0; i < 4; i++) {
          expect(await deliver(receiver, freshEvent())).toMatchObject({
            status: 503,
            reason: 'store_unavailable',
          });
        }
        expect(errors.map((error) => error.code)).toEqual(Array(4).fill('store_unavailable'));
        expect(errors[0]?.message).toMatch(told);
        state.now = 'ok';
        const event = freshEvent();
        expect(await deliver(receiver, event)).toMatchObject({ status: 200 });
        expect(ran).toEqual([event.id]);
        // Nothing is left to wait for: close() resolves long before its timeout.
        const closing = performance.now();
        await receiver.close({ timeoutMs: 5000 });
        expect(performance.now() - closing).toBeLessThan(1000);
      },
    );

    it('a claim answered with a plain value is taken as it is, as await would', async () => {
      const { receiver, ran } = make({ now: 'plain' });
      expect(await deliver(receiver, freshEvent())).toMatchObject({ status: 200, duplicate: true });
      expect(ran).toEqual([]);
      await receiver.close({ timeoutMs: 1000 });
    });

    it('a claim that never answers: 503 within storeTimeoutMs, and close({ timeoutMs }) resolves', async () => {
      const state: { now: Fault } = { now: 'never' };
      const { receiver, errors } = make(state);
      const started = performance.now();
      expect(await deliver(receiver, freshEvent())).toMatchObject({
        status: 503,
        reason: 'store_unavailable',
      });
      expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + 1000);
      expect(errors[0]?.message).toMatch(/did not answer claim\(\) within 200 ms \(storeTimeoutMs\)/);
      const hanging = deliver(receiver, freshEvent());
      await receiver.close({ timeoutMs: 50 });
      expect(await hanging).toMatchObject({ status: 503 });
    });
  });
}
