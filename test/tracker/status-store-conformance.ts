import { describe, expect, it } from 'vitest';
import type { TrackedMessage } from '../../src/tracker/record.js';
import type { StatusStore } from '../../src/tracker/store.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { uniqueId } from '../support/unit.js';
import { until } from '../support/until.js';

export interface StatusStoreSubject {
  /** Two stores over the same data: one per process (the memory store: the same one twice). */
  stores: [StatusStore, StatusStore];
  /** A store over the same data whose retentionMs is short, so the case can wait it out on the store's own clock. */
  shortLived: StatusStore;
  retentionMs: number;
  /**
   * Moves shortLived's clock by `ms`, for a store whose clock the test owns (the memory store's `now`). Without
   * it, retention ends on the server's own clock, which no test can move: the case waits for it, bounded.
   */
  advance?(ms: number): void;
}

const record = (messageId: string, version: number, status: TrackedMessage['status'], expectedAt = 1000) => ({
  messageId,
  status,
  expectedAt,
  history: [{ status, at: new Date(expectedAt).toISOString(), source: 'expect' as const }],
  version,
});

const at = (second: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, second)).toISOString();

/** The status-store contract: every StatusStore passes it against its real server. */
export function describeStatusStoreConformance(name: string, subject: () => StatusStoreSubject): void {
  describe(`status store conformance: ${name}`, () => {
    it('writes only over the version it read (compare and set)', async () => {
      const [store] = subject().stores;
      const id = uniqueId('msg_');
      expect(await store.read(id)).toBeUndefined();
      expect(await store.write(record(id, 1, 'queued'), 0)).toBe(true);
      expect(await store.write(record(id, 1, 'queued'), 0)).toBe(false);
      expect(await store.write(record(id, 2, 'submitted'), 1)).toBe(true);
      expect(await store.write(record(id, 3, 'delivered'), 1)).toBe(false);
      expect(await store.read(id)).toMatchObject({ messageId: id, status: 'submitted', version: 2 });
    });

    it('stays monotonic and runs each transition once under concurrent writers in two processes', async () => {
      const { stores } = subject();
      const seen = new Map<string, number>();
      const trackers = stores.map((store) => {
        const tracker = createMessageTracker({ store });
        tracker.onTransition(({ messageId, to }) => {
          seen.set(`${messageId}:${to}`, (seen.get(`${messageId}:${to}`) ?? 0) + 1);
        });
        return tracker;
      });
      const ids = Array.from({ length: 20 }, () => uniqueId('msg_'));
      const steps = ['queued', 'submitted', 'failed', 'delivered'] as const;
      const writes = ids.flatMap((messageId) =>
        Array.from({ length: 12 }, (_, i) => {
          const status = steps[(i * 7) % 4] as (typeof steps)[number];
          const event = {
            type: `message.${status}`,
            created_at: at(steps.indexOf(status)),
            data: { message_id: messageId },
          };
          return () => (trackers[i % 2] as (typeof trackers)[number]).observeEvent(event);
        }),
      );
      await Promise.all(writes.map((write) => write()));
      for (const id of ids) {
        const status = await trackers[0]?.status(id);
        // delivered's created_at is the latest, so it stands whichever order the writes landed in.
        expect(status?.status).toBe('delivered');
        for (const step of status?.history ?? []) expect(seen.get(`${id}:${step.status}`)).toBe(1);
      }
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    });

    it('lists open messages oldest first, within the limit, and counts them', async () => {
      const [store, other] = subject().stores;
      const base = 1_000_000 + Math.floor(Math.random() * 1e9);
      const ids = Array.from({ length: 4 }, () => uniqueId('msg_'));
      for (const [i, id] of ids.entries())
        expect(await store.write(record(id, 1, 'queued', base + i), 0)).toBe(true);
      expect(await store.write(record(ids[1] as string, 2, 'delivered', base + 1), 1)).toBe(true);
      const before = await other.countOpen();
      const open = await other.open(base + 2, 10);
      const ours = open.filter((kept) => ids.includes(kept.messageId)).map((kept) => kept.messageId);
      expect(ours).toEqual([ids[0], ids[2]]);
      expect((await other.open(base + 3, 1)).length).toBe(1);
      expect(before).toBeGreaterThanOrEqual(3);
    });

    it('forgets a final message after retentionMs, and an open one never', async () => {
      const { shortLived: store, retentionMs, advance } = subject();
      const final = uniqueId('msg_');
      const open = uniqueId('msg_');
      await store.write(record(final, 1, 'delivered'), 0);
      await store.write(record(open, 1, 'submitted'), 0);
      if (advance) {
        advance(retentionMs - 1);
        expect(await store.read(final)).toMatchObject({ status: 'delivered' });
        advance(2);
        expect(await store.read(final)).toBeUndefined();
      } else {
        const started = Date.now();
        await until(async () => (await store.read(final)) === undefined, { timeoutMs: retentionMs + 10_000 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(retentionMs - 50);
      }
      expect(await store.read(open)).toMatchObject({ status: 'submitted' });
      // A message forgotten by retention can be written again from nothing.
      expect(await store.write(record(final, 1, 'queued'), 0)).toBe(true);
    });
  });
}
