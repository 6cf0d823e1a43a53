import { describe, expect, it } from 'vitest';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

describe('concurrency and backpressure', () => {
  it('never runs more than `concurrency` handlers at once, and every event is processed', async () => {
    const receiver = createReceiver({ secrets: SECRET, concurrency: 3 });
    let running = 0;
    let most = 0;
    const handled: string[] = [];
    const full = gate();
    receiver.on('message.delivered', async (event) => {
      running++;
      most = Math.max(most, running);
      if (running === 3) full.open();
      await full.opened; // the first three are held until all three run; a fourth would raise most
      running--;
      handled.push(event.id as string);
    });
    const events = Array.from({ length: 12 }, () => createEvent('message.delivered'));
    const outcomes = await Promise.all(events.map((event) => receiver.receive(delivery(event))));
    for (const outcome of outcomes) expectAccepted(outcome);
    expect(most).toBe(3);
    expect(handled.sort()).toEqual(events.map((event) => event.id).sort());
  });

  it('past maxQueue waiting events answers 503 overloaded + Retry-After before claiming; the retry is processed', async () => {
    const receiver = createReceiver({
      secrets: SECRET,
      concurrency: 2,
      maxQueue: 2,
      retryAfterSeconds: 3,
    });
    const held = gate();
    const handled: string[] = [];
    receiver.on('message.delivered', async (event) => {
      await held.opened;
      handled.push(event.id as string);
    });
    const admitted = Array.from({ length: 4 }, () => createEvent('message.delivered'));
    const answers = admitted.map((event) => receiver.receive(delivery(event)));
    await until(() => receiver.metrics().queue.running === 2 && receiver.metrics().queue.waiting === 2);

    const turnedAway = createEvent('message.delivered');
    const overloaded = await receiver.receive(delivery(turnedAway));
    expectRejected(overloaded, 503, 'overloaded', '3');
    expect(overloaded.event).toEqual({ id: turnedAway.id, type: 'message.delivered' });

    held.open();
    for (const outcome of await Promise.all(answers)) expectAccepted(outcome);
    // Not claimed when it was turned away: the service's retry runs it (a claimed event would answer 409).
    expectAccepted(await receiver.receive(delivery(turnedAway)));
    expect(handled.sort()).toEqual([...admitted, turnedAway].map((event) => event.id).sort());
  });

  it('maxQueue 0: no waiting at all, an event is taken only when a handler slot is free', async () => {
    const receiver = createReceiver({ secrets: SECRET, concurrency: 1, maxQueue: 0 });
    const held = gate();
    receiver.on('message.delivered', () => held.opened);
    const first = receiver.receive(delivery(createEvent('message.delivered')));
    await until(() => receiver.metrics().queue.running === 1);
    expectRejected(
      await receiver.receive(delivery(createEvent('message.delivered'))),
      503,
      'overloaded',
      '5',
    );
    held.open();
    expectAccepted(await first);
    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))));
  });

  it('counts events being claimed against the queue, so a burst cannot overshoot maxQueue', async () => {
    const store = new MemoryDedupeStore();
    // Claims are held until the whole burst was sent: every request is between the queue check and the queue.
    const burstSent = gate();
    const slowStore = {
      claim: async (key: string, leaseMs: number) => {
        await burstSent.opened;
        return store.claim(key, leaseMs);
      },
      complete: store.complete.bind(store),
      release: store.release.bind(store),
      renew: store.renew.bind(store),
    };
    const receiver = createReceiver({
      secrets: SECRET,
      store: slowStore,
      concurrency: 1,
      maxQueue: 2,
    });
    const held = gate();
    receiver.on('message.delivered', () => held.opened);
    const answers = Array.from({ length: 6 }, () =>
      receiver.receive(delivery(createEvent('message.delivered'))),
    );
    burstSent.open();
    await until(() => receiver.metrics().queue.running === 1 && receiver.metrics().queue.waiting === 2);
    held.open();
    const statuses = (await Promise.all(answers)).map((outcome) => outcome.status).sort();
    expect(statuses).toEqual([200, 200, 200, 503, 503, 503]);
  });
});

describe("ack: 'async'", () => {
  it('answers 202 once verified and claimed; the handler runs after; waitUntil receives the work', async () => {
    const kept: Promise<unknown>[] = [];
    const receiver = createReceiver({
      secrets: SECRET,
      ack: 'async',
      waitUntil: (work) => kept.push(work),
    });
    const held = gate();
    let finished = 0;
    receiver.on('message.delivered', async () => {
      await held.opened;
      finished++;
    });
    const event = createEvent('message.delivered');
    const outcome = await receiver.receive(delivery(event));
    expectAccepted(outcome, 202);
    expect(outcome.event).toEqual({ id: event.id, type: 'message.delivered' });
    expect(finished).toBe(0);
    expect(kept).toHaveLength(1);
    // Claimed before the answer: a retry now finds it in flight, not free.
    expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress', '60');
    held.open();
    await kept[0];
    expect(finished).toBe(1);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
  });

  it("a request's own waitUntil wins over the option", async () => {
    const fromOption: Promise<unknown>[] = [];
    const fromRequest: Promise<unknown>[] = [];
    const receiver = createReceiver({
      secrets: SECRET,
      ack: 'async',
      waitUntil: (work) => fromOption.push(work),
    });
    let handled = 0;
    receiver.on('message.delivered', () => {
      handled++;
    });
    const request = {
      ...delivery(createEvent('message.delivered')),
      waitUntil: (work: Promise<unknown>) => fromRequest.push(work),
    };
    expectAccepted(await receiver.receive(request), 202);
    expect(fromOption).toHaveLength(0);
    expect(fromRequest).toHaveLength(1);
    await fromRequest[0];
    expect(handled).toBe(1);
  });

  it('a handler failure after the 202 releases the claim and tells onError; the retry processes it', async () => {
    const kept: Promise<unknown>[] = [];
    const receiver = createReceiver({
      secrets: SECRET,
      ack: 'async',
      waitUntil: (work) => kept.push(work),
    });
    let calls = 0;
    receiver.on('message.delivered', () => {
      calls++;
      if (calls === 1) throw new Error('database down');
    });
    const errors: { code: string; cause: unknown; eventId?: string; requestId: string }[] = [];
    receiver.onError((error, ctx) => {
      errors.push({ code: error.code, cause: error.cause, eventId: ctx.eventId, requestId: ctx.requestId });
    });
    const event = createEvent('message.delivered');
    const first = await receiver.receive(delivery(event));
    expectAccepted(first, 202);
    await kept[0];
    expect(errors).toEqual([
      {
        code: 'handler_failed',
        cause: new Error('database down'),
        eventId: event.id,
        requestId: first.requestId,
      },
    ]);
    // Released, not completed and not left in flight: the service's retry runs it again.
    expectAccepted(await receiver.receive(delivery(event)), 202);
    await kept[1];
    expect(calls).toBe(2);
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
  });

  it('a throwing waitUntil is reported as wait_until_failed, never as a handler failure; the event is processed anyway', async () => {
    const receiver = createReceiver({
      secrets: SECRET,
      ack: 'async',
      waitUntil: () => {
        throw new Error('not in a request scope');
      },
    });
    const told: string[] = [];
    receiver.onError((error, ctx) => {
      told.push(`${error.code}/${ctx.reason}`);
    });
    let handled = 0;
    receiver.on('message.delivered', () => {
      handled++;
    });
    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))), 202);
    await receiver.close();
    expect(handled).toBe(1);
    expect(told).toEqual(['wait_until_failed/wait_until_failed']);
  });
});
