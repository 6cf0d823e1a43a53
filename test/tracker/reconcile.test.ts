import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStatusStore } from '../../src/tracker/memory-store.js';
import { createServiceClient } from '../../src/tracker/service-client.js';
import { until } from '../support/until.js';
import { type Loop, STATUS_KEYS, sendAndExpect, sendingOf, startLoop } from './loop.js';

let loop: Loop;
const store = new MemoryStatusStore();

beforeAll(async () => {
  loop = await startLoop({
    stores: [store, store],
    chaos: { webhookLoss: 0.3 },
    rateLimit: { requests: 25, windowSeconds: 1 },
  });
});

afterAll(async () => {
  await loop.close();
});

describe('tracker.reconcile against the emulator', () => {
  it('finds every lost receipt, waits out each 429, and two passes at once run no transition twice', async () => {
    const { emulator, trackers, runs } = loop;
    const ids = await sendAndExpect(sendingOf(loop), 60);
    const messages = () => ids.map((id) => emulator.state.messages.get(id));
    await until(() => messages().every((m) => m?.status === 'delivered' || m?.status === 'failed'));
    await emulator.idle();
    const lost = messages()
      .filter((m) => m?.webhook_lost)
      .map((m) => m?.id as string);
    expect(lost.length).toBeGreaterThan(5);
    await until(async () => (await trackers[0].countOpen()) === lost.length);

    // Two reconcilers, each with its key: the emulator's quota tells each its own waits.
    const clients = STATUS_KEYS.map((apiKey) => createServiceClient({ baseUrl: emulator.url, apiKey }));
    const [first, second] = await Promise.all(
      trackers.map((tracker, i) => tracker.reconcile({ client: clients[i] as never, olderThanMs: 0 })),
    );
    expect((first?.checked ?? 0) + (second?.checked ?? 0)).toBeGreaterThanOrEqual(lost.length);
    expect(first?.stillOpen).toBe(0);
    expect(first?.failed).toBe(0);
    for (const id of ids) {
      const status = await trackers[0].status(id);
      expect(status?.status).toBe(emulator.state.messages.get(id)?.status);
      if (lost.includes(id)) expect(status?.history.at(-1)?.source).toBe('reconcile');
      expect(emulator.state.messages.get(id)?.status_read_at !== undefined).toBe(lost.includes(id));
    }
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    // No request broke the wait a 429 told.
    expect(emulator.state.brokenWaits).toBe(0);
  });

  it('honours 429: with webhooks held, 80 status reads at 25 a second wait and never come early', async () => {
    const { emulator, trackers } = loop;
    emulator.setPaused('test', true);
    try {
      const ids = await sendAndExpect(sendingOf(loop), 80);
      await until(() => ids.every((id) => emulator.state.messages.get(id)?.status !== 'queued'));
      await until(() =>
        ids.every((id) => ['delivered', 'failed'].includes(emulator.state.messages.get(id)?.status ?? '')),
      );
      const client = createServiceClient({ baseUrl: emulator.url, apiKey: STATUS_KEYS[0] });
      const summary = await trackers[1].reconcile({ client, olderThanMs: 0, limit: 80 });
      expect(summary).toMatchObject({ checked: 80, moved: 80, stillOpen: 0, failed: 0 });
      expect(client.stats.rateLimited).toBeGreaterThan(0);
      expect(emulator.state.brokenWaits).toBe(0);
    } finally {
      emulator.setPaused('test', false);
    }
  });

  it('refuses a client without a key or a status path without {id}', () => {
    expect(() => createServiceClient({ baseUrl: 'http://x', apiKey: '' })).toThrow('apiKey must be');
    expect(() => createServiceClient({ baseUrl: 'x', apiKey: 'k' })).toThrow(
      'baseUrl must be an absolute URL',
    );
    expect(() => createServiceClient({ baseUrl: 'http://x', apiKey: 'k', statusPath: '/m' })).toThrow('{id}');
  });
});
