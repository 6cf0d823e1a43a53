import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/adapter.js';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { gate } from '../support/gate.js';
import {
  deliveredEvent,
  delivery,
  expectAccepted,
  expectRejected,
  nowSeconds,
  SECRET,
} from '../support/unit.js';

/** A clock the store reads; tests move it instead of faking timers. */
function manualClock(start = Date.now()) {
  const clock = { ms: start, now: () => clock.ms };
  return clock;
}

describe('replay safety through receive()', () => {
  it('100 concurrent deliveries of one event: the handler runs once, the rest are duplicate or 409', async () => {
    const receiver = createReceiver({ secrets: SECRET, store: new MemoryDedupeStore() });
    let calls = 0;
    const allSent = gate();
    receiver.on('message.delivered', async () => {
      calls++;
      await allSent.opened; // the handler still runs while every copy arrives
    });
    const event = deliveredEvent();
    const base = nowSeconds();
    const pending = Array.from({ length: 100 }, (_, i) =>
      receiver.receive(delivery(event, { timestamp: base - (i % 5) })),
    );
    allSent.open();
    const outcomes = await Promise.all(pending);
    expect(calls).toBe(1);
    const processed = outcomes.filter((o) => o.status === 200 && !o.duplicate);
    expect(processed).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome === processed[0]) continue;
      if (outcome.status === 200) expectAccepted(outcome, 200, true);
      else expectRejected(outcome, 409, 'event_in_progress');
    }
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
    expect(calls).toBe(1);
  });

  it('a handler that fails once answers 500; the re-signed retry is processed, then it is a duplicate', async () => {
    const receiver = createReceiver({ secrets: SECRET, store: new MemoryDedupeStore() });
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
      if (calls === 1) throw new Error('transient');
    });
    const event = deliveredEvent();
    const first = nowSeconds() - 60;
    expectRejected(await receiver.receive(delivery(event, { timestamp: first })), 500, 'handler_failed');
    expectAccepted(await receiver.receive(delivery(event, { timestamp: first + 30 })), 200);
    expectAccepted(await receiver.receive(delivery(event, { timestamp: first + 60 })), 200, true);
    expect(calls).toBe(2);
  });

  it('a claim whose process died (never settled) is processed again once its lease expired', async () => {
    const clock = manualClock();
    const store = new MemoryDedupeStore({ now: clock.now });
    const receiver = createReceiver({ secrets: SECRET, store, leaseMs: 60_000 });
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
    });
    const event = deliveredEvent();
    // The dead process: claimed the event's key and never completed nor released it.
    const dead = await store.claim(`live:${event.id}`, 60_000);
    expect(dead.status).toBe('claimed');

    expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
    clock.ms += 59_999;
    expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
    clock.ms += 1;
    expectAccepted(await receiver.receive(delivery(event)), 200);
    expect(calls).toBe(1);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
  });

  it('a slow handler whose lease expired cannot mark as completed the newer claim of a retry', async () => {
    const clock = manualClock();
    const store = new MemoryDedupeStore({ now: clock.now });
    const receiver = createReceiver({ secrets: SECRET, store, leaseMs: 1_000 });
    const told: string[] = [];
    receiver.onError((error) => {
      told.push(error.code);
    });
    const slow = gate();
    const retryHeld = gate();
    const started = [gate(), gate()];
    let calls = 0;
    receiver.on('message.delivered', async () => {
      calls++;
      started[calls - 1]?.open();
      await (calls === 1 ? slow.opened : retryHeld.opened);
    });
    const event = deliveredEvent();
    const first: Promise<Outcome> = receiver.receive(delivery(event));
    await started[0]?.opened;
    clock.ms += 1_001;
    const retry = receiver.receive(delivery(event));
    await started[1]?.opened;
    expect(calls).toBe(2);
    // The first handler finishes late: its complete must not turn the retry's live claim into "completed".
    slow.open();
    expectAccepted(await first, 200);
    // Its completion was refused (the claim is no longer its own) and reported, not forced.
    expect(told).toEqual(['lease_lost']);
    expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
    retryHeld.open();
    expectAccepted(await retry, 200);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
  });
});

describe('MemoryDedupeStore claims', () => {
  it('claim → in_flight with the remaining lease → complete → duplicate until retention ends', async () => {
    const clock = manualClock(1_000_000);
    const store = new MemoryDedupeStore({ now: clock.now });
    const claim = await store.claim('live:evt_a', 10_000);
    expect(claim).toEqual({ status: 'claimed', token: expect.any(String) });
    clock.ms += 2_500;
    expect(await store.claim('live:evt_a', 10_000)).toEqual({ status: 'in_flight', retryAfterMs: 7_500 });
    expect(await store.complete('live:evt_a', (claim as { token: string }).token, 60_000)).toBe(true);
    expect(await store.claim('live:evt_a', 10_000)).toEqual({ status: 'duplicate' });
    clock.ms += 60_000;
    expect(await store.claim('live:evt_a', 10_000)).toEqual({ status: 'duplicate' });
    clock.ms += 1_000;
    expect((await store.claim('live:evt_a', 10_000)).status).toBe('claimed');
  });

  it('release lets the next claim run; a wrong token changes nothing', async () => {
    const store = new MemoryDedupeStore();
    const claim = (await store.claim('k', 10_000)) as { token: string };
    expect(await store.release('k', 'not-the-owner')).toBe(false);
    expect(await store.complete('k', 'not-the-owner', 10_000)).toBe(false);
    expect((await store.claim('k', 10_000)).status).toBe('in_flight');
    expect(await store.release('k', claim.token)).toBe(true);
    expect(await store.release('k', claim.token)).toBe(false);
    expect((await store.claim('k', 10_000)).status).toBe('claimed');
  });

  it('a late complete or release from an expired owner does not touch the newer claim', async () => {
    const clock = manualClock();
    const store = new MemoryDedupeStore({ now: clock.now });
    const old = (await store.claim('k', 1_000)) as { token: string };
    clock.ms += 1_000;
    const newer = (await store.claim('k', 1_000)) as { status: string; token: string };
    expect(newer.status).toBe('claimed');
    expect(newer.token).not.toBe(old.token);
    expect(await store.complete('k', old.token, 60_000)).toBe(false);
    expect(await store.release('k', old.token)).toBe(false);
    expect((await store.claim('k', 1_000)).status).toBe('in_flight');
    expect(await store.complete('k', newer.token, 60_000)).toBe(true);
    expect(await store.claim('k', 1_000)).toEqual({ status: 'duplicate' });
  });

  it('an expired lease nobody took over can still be completed by its owner (the work did succeed)', async () => {
    const clock = manualClock();
    const store = new MemoryDedupeStore({ now: clock.now });
    const claim = (await store.claim('k', 1_000)) as { token: string };
    clock.ms += 5_000;
    expect(await store.complete('k', claim.token, 60_000)).toBe(true);
    expect(await store.claim('k', 1_000)).toEqual({ status: 'duplicate' });
  });
});
