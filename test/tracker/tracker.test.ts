import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { MemoryStatusStore } from '../../src/tracker/memory-store.js';
import type { StatusTransition } from '../../src/tracker/record.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import {
  deliveredEvent,
  delivery,
  expectAccepted,
  expectRejected,
  SECRET,
  uniqueId,
} from '../support/unit.js';

const at = (minute: number) => `2026-11-21T10:${String(minute).padStart(2, '0')}:00+00:00`;
const event = (type: string, messageId: string, minute: number, data: Record<string, unknown> = {}) => ({
  id: uniqueId('evt_'),
  type,
  created_at: at(minute),
  data: { message_id: messageId, to: '+15551234567', operator: 'op_a', ...data },
});

function tracked(options: Parameters<typeof createMessageTracker>[0] = {}) {
  const tracker = createMessageTracker(options);
  const transitions: StatusTransition[] = [];
  tracker.onTransition((transition) => {
    transitions.push(transition);
  });
  return { tracker, transitions, to: () => transitions.map((t) => `${t.messageId}:${t.to}:${t.source}`) };
}

describe('createMessageTracker', () => {
  it('moves forward only: queued → submitted → delivered; a copy or an older stage changes nothing', async () => {
    const { tracker, to } = tracked();
    const id = uniqueId('msg_');
    const sentAt = Date.parse(at(0));
    await tracker.expect(id, { to: '+15551234567', sentAt });
    await tracker.observeEvent(event('message.submitted', id, 1));
    await tracker.observeEvent(event('message.delivered', id, 3, { operator: 'op_b' }));
    await tracker.observeEvent(event('message.delivered', id, 3));
    await tracker.observeEvent(event('message.submitted', id, 9));
    const status = await tracker.status(id);
    expect(status?.status).toBe('delivered');
    expect(status?.final).toBe(true);
    expect(status?.operator).toBe('op_b');
    expect(status?.latencyMs).toBe(3 * 60_000);
    expect(status?.history.map((step) => `${step.status}@${step.at}/${step.source}`)).toEqual([
      `queued@${new Date(sentAt).toISOString()}/expect`,
      `submitted@${at(1)}/webhook`,
      `delivered@${at(3)}/webhook`,
    ]);
    expect(to()).toEqual([`${id}:queued:expect`, `${id}:submitted:webhook`, `${id}:delivered:webhook`]);
  });

  it('precedence later (default): the later created_at of delivered and failed wins; a status is never entered twice', async () => {
    const { tracker, to } = tracked();
    const id = uniqueId('msg_');
    await tracker.observeEvent(event('message.failed', id, 5));
    await tracker.observeEvent(event('message.delivered', id, 4));
    expect((await tracker.status(id))?.status).toBe('failed');
    await tracker.observeEvent(event('message.delivered', id, 6));
    await tracker.observeEvent(event('message.failed', id, 7));
    expect((await tracker.status(id))?.status).toBe('delivered');
    expect(to()).toEqual([`${id}:failed:webhook`, `${id}:delivered:webhook`]);
  });

  it.each([
    ['delivered', 'delivered'],
    ['failed', 'failed'],
  ] as const)('precedence %s: that status wins whatever the clocks say', async (precedence, winner) => {
    const { tracker } = tracked({ precedence });
    const id = uniqueId('msg_');
    await tracker.observeEvent(event(`message.${winner === 'delivered' ? 'failed' : 'delivered'}`, id, 1));
    await tracker.observeEvent(event(`message.${winner}`, id, 0));
    expect((await tracker.status(id))?.status).toBe(winner);
    const other = createMessageTracker({ precedence });
    await other.observeEvent(event(`message.${winner}`, id, 0));
    await other.observeEvent(event(`message.${winner === 'delivered' ? 'failed' : 'delivered'}`, id, 9));
    expect((await other.status(id))?.status).toBe(winner);
  });

  it('becomes unknown after finalAfterMs, with one transition; a later receipt still replaces it', async () => {
    let now = Date.parse(at(0));
    const { tracker, to } = tracked({ finalAfterMs: 60_000, now: () => now });
    const id = uniqueId('msg_');
    await tracker.expect(id, { sentAt: now });
    now += 59_999;
    expect((await tracker.status(id))?.status).toBe('queued');
    now += 1;
    expect((await tracker.status(id))?.status).toBe('unknown');
    expect((await tracker.status(id))?.status).toBe('unknown');
    await tracker.expire(id);
    await tracker.observe({ messageId: id, status: 'delivered', createdAt: at(2), source: 'reconcile' });
    const status = await tracker.status(id);
    expect(status?.status).toBe('delivered');
    expect(status?.history.at(-1)?.source).toBe('reconcile');
    expect(to()).toEqual([`${id}:queued:expect`, `${id}:unknown:timeout`, `${id}:delivered:reconcile`]);
  });

  it('runs a transition once when many writers race on one message', async () => {
    const { tracker, to } = tracked();
    const id = uniqueId('msg_');
    const copies = Array.from({ length: 50 }, (_, i) =>
      tracker.observeEvent(event(i % 2 ? 'message.delivered' : 'message.submitted', id, 1 + (i % 2))),
    );
    await Promise.all(copies);
    expect(to().sort()).toEqual([`${id}:delivered:webhook`, `${id}:submitted:webhook`].sort());
  });

  it('narrows the status view: latency only on a receipt', async () => {
    const tracker = createMessageTracker();
    const id = uniqueId('msg_');
    const view = await tracker.expect(id, { sentAt: new Date(at(0)) });
    expect(view).toMatchObject({ status: 'queued', final: false, latencyMs: undefined });
    expect(await tracker.status(uniqueId('msg_'))).toBeUndefined();
  });

  it('refuses a bad option, store or id with a message that says what to pass', async () => {
    expect(() => createMessageTracker({ precedence: 'newest' as never })).toThrow(
      "precedence must be 'later' or 'delivered' or 'failed'",
    );
    expect(() => createMessageTracker({ finalAfterMs: -1 })).toThrow('finalAfterMs must be a whole number');
    expect(() => createMessageTracker({ store: {} as never })).toThrow('needs a StatusStore');
    await expect(createMessageTracker().expect('' as string)).rejects.toThrow('message id');
    expect(() => createReceiver({ secrets: SECRET, tracker: {} as never })).toThrow('tracker must be');
  });

  it('a store that never answers fails within storeTimeoutMs', async () => {
    const store = new MemoryStatusStore();
    const stuck = Object.assign(Object.create(store), { read: () => new Promise<never>(() => {}) });
    const tracker = createMessageTracker({ store: stuck, storeTimeoutMs: 20 });
    await expect(tracker.status('msg_1')).rejects.toThrow('took longer than 20 ms');
  });
});

describe('createReceiver({ tracker })', () => {
  it('moves the status once handlers succeeded; a failed handler leaves it for the retry', async () => {
    const { tracker, to } = tracked();
    const receiver = createReceiver({ secrets: SECRET, tracker });
    let fail = true;
    receiver.on('message.delivered', () => {
      if (fail) throw new Error('fails once on purpose');
    });
    const delivered = deliveredEvent();
    const id = delivered.data.message_id;
    expectRejected(await receiver.receive(delivery(delivered)), 500, 'handler_failed');
    expect(await tracker.status(id)).toBeUndefined();
    fail = false;
    expectAccepted(await receiver.receive(delivery(delivered)));
    expectAccepted(await receiver.receive(delivery(delivered)), 200, true);
    expectAccepted(await receiver.receive(delivery({ ...delivered, id: uniqueId('evt_') })));
    expect((await tracker.status(id))?.status).toBe('delivered');
    expect(to()).toEqual([`${id}:delivered:webhook`]);
  });

  it('a failing store answers 500 so the service retries the event', async () => {
    const store = new MemoryStatusStore();
    const broken = Object.assign(Object.create(store), {
      write: () => Promise.reject(new Error('status store down')),
    });
    const receiver = createReceiver({ secrets: SECRET, tracker: createMessageTracker({ store: broken }) });
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 500, 'handler_failed');
  });
});
