import { describe, expect, it } from 'vitest';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { deliveredEvent, delivery, expectRejected, SECRET } from '../support/unit.js';

const HOUR = 3_600_000;

function storeAt(maxEntries: number) {
  const clock = { ms: 1_700_000_000_000 };
  const store = new MemoryDedupeStore({ maxEntries, now: () => clock.ms });
  const completeNow = async (key: string, retentionMs = HOUR) => {
    const claim = await store.claim(key, 10_000);
    if (claim.status !== 'claimed') throw new Error(`${key} was ${claim.status}`);
    expect(await store.complete(key, claim.token, retentionMs)).toBe(true);
  };
  const statusOf = async (key: string) => {
    const claim = await store.claim(key, 10_000);
    if (claim.status === 'claimed') await store.release(key, claim.token);
    return claim.status;
  };
  return { clock, store, completeNow, statusOf };
}

describe('MemoryDedupeStore bounds', () => {
  it('never holds more than maxEntries; the newest completions survive', async () => {
    const { store, completeNow, statusOf } = storeAt(100);
    for (let i = 0; i < 1_000; i++) {
      await completeNow(`live:evt_${i}`);
      expect(store.size).toBeLessThanOrEqual(100);
    }
    expect(store.size).toBe(100);
    expect(await statusOf('live:evt_999')).toBe('duplicate');
    expect(await statusOf('live:evt_901')).toBe('duplicate');
    expect(await statusOf('live:evt_0')).toBe('claimed');
  });

  it('evicts the oldest completed first', async () => {
    const { completeNow, statusOf, store } = storeAt(3);
    await completeNow('a');
    await completeNow('b');
    await completeNow('c');
    await completeNow('d');
    expect(store.size).toBe(3);
    expect(await statusOf('b')).toBe('duplicate');
    expect(await statusOf('c')).toBe('duplicate');
    expect(await statusOf('d')).toBe('duplicate');
    expect(await statusOf('a')).toBe('claimed');
  });

  it('evicts an expired entry before an older one that is still retained', async () => {
    const { clock, completeNow, statusOf } = storeAt(3);
    await completeNow('old-long', 24 * HOUR);
    await completeNow('short', 1_000);
    await completeNow('newest', 24 * HOUR);
    clock.ms += 5_000;
    await completeNow('incoming');
    expect(await statusOf('old-long')).toBe('duplicate');
    expect(await statusOf('newest')).toBe('duplicate');
    expect(await statusOf('incoming')).toBe('duplicate');
  });

  it('evicts an expired lease (its process died) before any retained completion', async () => {
    const { clock, store, completeNow, statusOf } = storeAt(2);
    expect((await store.claim('dead', 1_000)).status).toBe('claimed');
    await completeNow('kept');
    clock.ms += 2_000;
    await completeNow('incoming');
    expect(await statusOf('kept')).toBe('duplicate');
    expect(await statusOf('incoming')).toBe('duplicate');
  });

  // A full store looks for expired leases only once the earliest expiry it knows of has passed: a renewal
  // moves an expiry later, and a lease taken later may expire sooner, so both must still be found.
  it('evicts a lease that expired after an earlier one was renewed, and keeps the renewed one', async () => {
    const { clock, store, completeNow, statusOf } = storeAt(3);
    const renewed = await store.claim('renewed', 1_000);
    if (renewed.status !== 'claimed') throw new Error('not claimed');
    await completeNow('kept');
    clock.ms += 500;
    expect(await store.renew('renewed', renewed.token, 60_000)).toBe(true);
    expect((await store.claim('short', 600)).status).toBe('claimed');
    clock.ms += 1_000;
    await completeNow('incoming');
    expect(await statusOf('kept')).toBe('duplicate');
    expect((await store.claim('renewed', 60_000)).status).toBe('in_flight');
    expect((await store.claim('short', 60_000)).status).toBe('claimed');
  });

  it('never evicts a live lease: when full of claims in flight, claim rejects with a diagnosis', async () => {
    const { store } = storeAt(2);
    expect((await store.claim('one', 60_000)).status).toBe('claimed');
    expect((await store.claim('two', 60_000)).status).toBe('claimed');
    await expect(store.claim('three', 60_000)).rejects.toThrow(/maxEntries/);
    expect((await store.claim('one', 60_000)).status).toBe('in_flight');
    expect((await store.claim('two', 60_000)).status).toBe('in_flight');
    expect(store.size).toBe(2);
  });

  it('a full store answers 503 store_unavailable through the receiver, and the retry is processed', async () => {
    const { store } = storeAt(1);
    const receiver = createReceiver({ secrets: SECRET, store });
    expect((await store.claim('live:evt_other', 60_000)).status).toBe('claimed');
    const event = deliveredEvent();
    expectRejected(await receiver.receive(delivery(event)), 503, 'store_unavailable');
    store.clear();
    expect((await receiver.receive(delivery(event))).status).toBe(200);
  });

  it('rejects a maxEntries that is not a whole number of at least 1', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryDedupeStore({ maxEntries })).toThrow(/maxEntries/);
    }
  });
});
