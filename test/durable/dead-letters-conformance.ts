import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ALL_PAGE_SIZE } from '../../src/durable/dead-letter-pages.js';
import type { DeadLetterProgress, DeadLetters, DurableQueue, DurableWorker } from '../../src/index.js';
import { createReceiver, DeadLetterError, type Receiver, WebhookConfigError } from '../../src/index.js';
import { gate } from '../support/gate.js';
import { deliveredEvent, delivery, expectAccepted, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

export interface DeadLetterHarness<Q extends DurableQueue> {
  /** A queue on a name of its own, retrying `attempts` times. */
  queue(attempts: number, options?: { retentionMs?: number }): Q;
  /** Runs the engine's removal of jobs past their retention, where the engine runs it on a timer. */
  sweep(queue: Q): Promise<void>;
  worker(receiver: Receiver, queue: Q): Promise<DurableWorker>;
  deadLetters(queue: Q): DeadLetters;
  /** The dead letters of the same queue on a connection of their own, as a second operator opens them. */
  apart(queue: Q): DeadLetters;
  /** Dead letters of an engine that cannot be reached, with a short deadline. */
  unreachable(): DeadLetters;
}

/** A queue whose handler fails while `poisoned`, and counts the runs of each event. */
export function poisonedQueue<Q extends DurableQueue>(
  harness: DeadLetterHarness<Q>,
  attempts: number,
  options?: { retentionMs?: number },
) {
  const queue = harness.queue(attempts, options);
  const receiver = createReceiver({ secrets: SECRET, queue });
  const state = {
    poisoned: true,
    runs: new Map<string, number[]>(),
    hold: undefined as Promise<void> | undefined,
    /** The event each id's handler got last. */
    seen: new Map<string, unknown>(),
  };
  const deadLettered = new Set<string>();
  const changed = new Set<() => void>();
  receiver.on('message.delivered', async (event, ctx) => {
    const id = event.id as string;
    state.seen.set(id, event);
    if (!state.poisoned) state.runs.set(id, [...(state.runs.get(id) ?? []), ctx.attempt as number]);
    for (const listener of changed) listener();
    if (state.poisoned) throw new Error(`poisoned payload of ${id}`);
    await state.hold;
  });
  receiver.onError((_error, ctx) => {
    if (ctx.eventId) deadLettered.add(ctx.eventId);
    for (const listener of changed) listener();
  });
  const changes = (listener: () => void) => {
    changed.add(listener);
    return () => changed.delete(listener);
  };
  /**
   * Delivers `count` events and waits until each one is dead-lettered: onError told, and the engine holding
   * it (a pg-boss worker tells onError before it fails the job). `id` names the events (random ids otherwise).
   */
  async function poison(
    count: number,
    held: DeadLetters,
    idOf?: (index: number) => string,
    dataOf?: () => Record<string, unknown>,
  ): Promise<string[]> {
    const events = Array.from({ length: count }, (_, index) => {
      const event = deliveredEvent(dataOf?.());
      return idOf ? { ...event, id: idOf(index) } : event;
    });
    for (const event of events) expectAccepted(await receiver.receive(delivery(event)), 202);
    const ids = events.map((event) => event.id as string);
    await until(() => ids.every((id) => deadLettered.has(id)), { changes, what: 'dead letters' });
    await until(async () => (await held.count()) === count, { what: `${count} dead letters held` });
    return ids;
  }
  const ranOnce = (id: string) => until(() => (state.runs.get(id)?.length ?? 0) >= 1, { changes });
  /** Waits until the engine holds the event's job as completed: a redelivery is answered 200 duplicate. */
  const completed = (id: string) =>
    until(async () => (await receiver.receive(delivery({ ...deliveredEvent(), id }))).status === 200, {
      what: `${id} completed`,
    });
  return { queue, receiver, state, poison, ranOnce, completed };
}

/** What both engines' DeadLetters must do, on the real engine. */
export function describeDeadLetters<Q extends DurableQueue>(name: string, harness: DeadLetterHarness<Q>) {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });
  const setUp = (attempts: number, options?: { retentionMs?: number }) => {
    const poisoned = poisonedQueue(harness, attempts, options);
    const deadLetters = harness.deadLetters(poisoned.queue);
    closers.push(
      () => poisoned.queue.close?.() ?? Promise.resolve(),
      () => deadLetters.close(),
    );
    const start = async () => {
      const worker = await harness.worker(poisoned.receiver, poisoned.queue);
      closers.push(() => worker.close({ timeoutMs: 1000 }));
      return worker;
    };
    return {
      ...poisoned,
      deadLetters,
      start,
      poison: (count: number, idOf?: (index: number) => string, dataOf?: () => Record<string, unknown>) =>
        poisoned.poison(count, deadLetters, idOf, dataOf),
    };
  };

  describe(`${name}: dead letters in hand`, () => {
    it('lists and shows a poison event with its error and attempts; a replay runs it once, fixed', async () => {
      const { deadLetters, start, poison, state, ranOnce, completed } = setUp(2);
      const worker = await start();
      const began = Date.now();
      const [id] = (await poison(1)) as [string];
      const [listed] = await deadLetters.list();
      expect(listed).toMatchObject({
        id,
        key: `live:${id}`,
        mode: 'live',
        event: { id, type: 'message.delivered' },
        error: { reason: 'handler_failed' },
        attempts: 2,
      });
      expect(listed?.error.message).toContain(`poisoned payload of ${id}`);
      expect(listed?.enqueuedAt.getTime()).toBeGreaterThanOrEqual(began - 1000);
      expect(listed?.failedAt.getTime()).toBeGreaterThanOrEqual(listed?.enqueuedAt.getTime() as number);
      expect(await deadLetters.show(id)).toEqual(listed);
      expect(await deadLetters.count()).toBe(1);

      state.poisoned = false; // the handler is fixed
      expect(await deadLetters.replay([id])).toEqual({ replayed: [id], skipped: [] });
      await ranOnce(id);
      // A fresh attempt count, and one run: the completed job answers its redelivery as a duplicate.
      await completed(id);
      expect(worker.counters().completed).toBe(1);
      expect(state.runs.get(id)).toEqual([1]);
      expect(await deadLetters.show(id)).toBeUndefined();
      expect(await deadLetters.count()).toBe(0);
      expect(state.runs.get(id)).toEqual([1]);
    }, 30_000);

    it('skips a replay while the event is queued or running: it never runs twice', async () => {
      const { deadLetters, start, poison, state, ranOnce, completed } = setUp(1);
      const first = await start();
      const [id] = (await poison(1)) as [string];
      await first.close();
      state.poisoned = false;
      expect(await deadLetters.replay([id])).toEqual({ replayed: [id], skipped: [] });
      // Queued, no worker yet: a second replay finds the live job and leaves it.
      const queued = await deadLetters.replay([id]);
      expect(queued).toMatchObject({ replayed: [], skipped: [{ id, reason: 'live' }] });
      expect(queued.skipped[0]?.message).toMatch(/waiting or running/);
      const release = gate();
      state.hold = release.opened;
      const worker = await start();
      await ranOnce(id);
      // Running, held in its handler: the same.
      expect(await deadLetters.replay([id])).toMatchObject({ skipped: [{ id, reason: 'live' }] });
      expect(await deadLetters.purge([id])).toMatchObject({ purged: [], skipped: [{ id, reason: 'live' }] });
      release.open();
      await completed(id);
      expect(worker.counters().completed).toBe(1);
      expect(await deadLetters.replay([id])).toMatchObject({ skipped: [{ id, reason: 'completed' }] });
      expect(state.runs.get(id)).toEqual([1]);
    }, 30_000);

    it('pages the list, latest failure first, and purges by id and all', async () => {
      const { deadLetters, start, poison } = setUp(1);
      await start();
      const ids = await poison(3);
      const pages = [await deadLetters.list({ limit: 2 }), await deadLetters.list({ limit: 2, offset: 2 })];
      expect(pages.map((page) => page.length)).toEqual([2, 1]);
      const listed = pages.flat();
      expect(new Set(listed.map((entry) => entry.id))).toEqual(new Set(ids));
      const times = listed.map((entry) => entry.failedAt.getTime());
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(await deadLetters.list({ offset: 3 })).toEqual([]);

      const [one, ...rest] = ids as [string, ...string[]];
      expect(await deadLetters.purge([one, 'evt_never_seen'])).toMatchObject({
        purged: [one],
        skipped: [{ id: 'evt_never_seen', reason: 'not_found' }],
      });
      expect(await deadLetters.show(one)).toBeUndefined();
      const all = await deadLetters.purge('all');
      expect(new Set(all.purged)).toEqual(new Set(rest));
      expect(await deadLetters.count()).toBe(0);
      expect(await deadLetters.replay('all')).toEqual({ replayed: [], skipped: [] });
    }, 30_000);

    it('keeps a dead letter past the retention of completed events, until it is replayed', async () => {
      const { deadLetters, start, poison, state, ranOnce, completed, receiver, queue } = setUp(1, {
        retentionMs: 1000,
      });
      await start();
      const [dead] = (await poison(1)) as [string];
      state.poisoned = false;
      const done = deliveredEvent();
      expectAccepted(await receiver.receive(delivery(done)), 202);
      await completed(done.id);
      // Until the engine removed the completed event (its redelivery is a new job), a fresh event completing
      // each time (BullMQ cleans up as a job completes) and the engine's sweep run (pg-boss).
      await until(
        async () => {
          expectAccepted(await receiver.receive(delivery(deliveredEvent())), 202);
          await harness.sweep(queue);
          return (await receiver.receive(delivery({ ...deliveredEvent(), id: done.id }))).status === 202;
        },
        { what: 'the completed event removed by retention' },
      );
      expect(await deadLetters.count()).toBe(1);
      expect(await deadLetters.show(dead)).toMatchObject({ id: dead, error: { reason: 'handler_failed' } });
      expect(await deadLetters.replay([dead])).toEqual({ replayed: [dead], skipped: [] });
      await ranOnce(dead);
      expect(state.runs.get(dead)).toEqual([1]);
    }, 30_000);

    it('takes an event with a NUL and lone surrogates, and hands it on exactly as it came', async () => {
      const { deadLetters, start, poison, state, ranOnce, completed } = setUp(1);
      await start();
      const odd = () => ({ message_id: 'msg_\u0000\udc00', operator: 'op_\ud800\u0000b' });
      const [id] = (await poison(1, () => `evt_${randomUUID()}\u0000\udbff`, odd)) as [string];
      const sent = state.seen.get(id) as { data: Record<string, unknown> };
      expect(sent.data).toMatchObject(odd());
      const shown = await deadLetters.show(id);
      expect(shown?.event).toEqual(sent);
      state.seen.delete(id);
      state.poisoned = false;
      expect(await deadLetters.replay([id])).toEqual({ replayed: [id], skipped: [] });
      await ranOnce(id);
      expect(state.seen.get(id)).toEqual(sent);
      await completed(id);
    }, 30_000);

    it('addresses an event whose id holds a colon by the id list shows', async () => {
      const { deadLetters, start, poison, state, ranOnce } = setUp(1);
      const first = await start();
      const ids = await poison(2, (index) => `evt_${randomUUID()}:part:${index}`);
      await first.close();
      const [replayed, purged] = ids as [string, string];
      expect(new Set((await deadLetters.list()).map((entry) => entry.id))).toEqual(new Set(ids));
      expect(await deadLetters.show(replayed)).toMatchObject({ id: replayed, key: `live:${replayed}` });
      expect(await deadLetters.show(`live:${replayed}`)).toMatchObject({ id: replayed });
      state.poisoned = false;
      expect(await deadLetters.replay([replayed])).toEqual({ replayed: [replayed], skipped: [] });
      expect(await deadLetters.purge([purged])).toEqual({ purged: [purged], skipped: [] });
      expect(await deadLetters.count()).toBe(0);
      await start();
      await ranOnce(replayed);
      expect(state.runs.get(purged)).toBeUndefined();
    }, 30_000);

    it('a replay and a purge of the same dead letter at once: exactly one of them acts', async () => {
      const { deadLetters, start, poison, queue } = setUp(1);
      const other = harness.apart(queue);
      closers.push(() => other.close());
      const worker = await start();
      const ids = await poison(30);
      await worker.close(); // a replayed job stays waiting
      const outcomes: { id: string; replayed: boolean; purged: boolean }[] = [];
      for (const id of ids) {
        const [replay, purge] = await Promise.all([deadLetters.replay([id]), other.purge([id])]);
        outcomes.push({ id, replayed: replay.replayed.includes(id), purged: purge.purged.includes(id) });
      }
      const both = outcomes.filter((outcome) => outcome.replayed === outcome.purged);
      expect(both).toEqual([]);
      for (const { id, replayed } of outcomes) {
        // A replayed event waits in the queue; a purged one is gone.
        const again = await deadLetters.replay([id]);
        expect(again.skipped[0]?.reason).toBe(replayed ? 'live' : 'not_found');
      }
    }, 60_000);

    it('replays and purges all of many dead letters a page at a time, telling the progress', async () => {
      const { deadLetters, start, poison } = setUp(1);
      await start();
      const ids = await poison(300);
      // One page of payloads in memory at a time: progress is told after each.
      const pages = Array.from({ length: 300 / ALL_PAGE_SIZE }, (_, page) => ({
        done: (page + 1) * ALL_PAGE_SIZE,
        total: 300,
      }));
      // The worker runs on and the handler still fails: each replayed event goes back to the dead-letter,
      // after the ones there at the start, and is not taken a second time.
      const replays: DeadLetterProgress[] = [];
      const replay = await deadLetters.replay('all', { onProgress: (progress) => replays.push(progress) });
      expect(replays).toEqual(pages);
      expect(replay.replayed).toHaveLength(300);
      expect(new Set(replay.replayed)).toEqual(new Set(ids));
      await until(async () => (await deadLetters.count()) === 300, { what: '300 dead letters again' });
      const purges: DeadLetterProgress[] = [];
      const purge = await deadLetters.purge('all', { onProgress: (progress) => purges.push(progress) });
      expect(purges).toEqual(pages);
      expect(new Set(purge.purged)).toEqual(new Set(ids));
      expect(await deadLetters.count()).toBe(0);
    }, 60_000);

    it('refuses wrong arguments at once, and an engine that does not answer within the deadline', async () => {
      const { deadLetters } = setUp(1);
      await expect(deadLetters.list({ limit: 0 })).rejects.toThrow(WebhookConfigError);
      await expect(deadLetters.replay([])).rejects.toThrow(/event ids .* or 'all'/);
      const down = harness.unreachable();
      closers.push(() => down.close());
      const failing = down.list();
      await expect(failing).rejects.toThrow(DeadLetterError);
      await expect(failing).rejects.toMatchObject({ code: expect.stringMatching(/^engine_/) });
      await expect(failing).rejects.toThrow(/Check that (Redis|PostgreSQL) is up/);
    }, 30_000);
  });
}
