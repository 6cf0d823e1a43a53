import { describe, expect, it } from 'vitest';
import { MemoryStatusStore } from '../../src/tracker/memory-store.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { describeStatusStoreConformance } from './status-store-conformance.js';

describeStatusStoreConformance('memory', () => {
  const store = new MemoryStatusStore();
  // The short-lived store's clock is the test's: retention ends when the test moves it, not after a wait.
  let now = Date.now();
  return {
    stores: [store, store],
    shortLived: new MemoryStatusStore({ retentionMs: 200, now: () => now }),
    retentionMs: 200,
    advance: (ms) => {
      now += ms;
    },
  };
});

describe('MemoryStatusStore', () => {
  it('keeps at most maxEntries, the oldest final messages going first', async () => {
    const store = new MemoryStatusStore({ maxEntries: 100 });
    const tracker = createMessageTracker({ store });
    await tracker.expect('msg_open_first');
    for (let i = 0; i < 1000; i++) {
      await tracker.observeEvent({ type: 'message.delivered', data: { message_id: `msg_${i}` } });
    }
    expect(store.size).toBe(100);
    expect((await tracker.status('msg_open_first'))?.status).toBe('queued');
    expect(await tracker.status('msg_0')).toBeUndefined();
    expect((await tracker.status('msg_999'))?.status).toBe('delivered');
  });

  it('refuses a bound that is no whole number', () => {
    expect(() => new MemoryStatusStore({ maxEntries: 0 })).toThrow('maxEntries must be a whole number');
  });
});
