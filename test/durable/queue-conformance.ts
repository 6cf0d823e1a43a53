import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/adapter.js';
import type { DurableQueue, DurableWorker } from '../../src/index.js';
import {
  createReceiver,
  type ErrorContext,
  type HandlerContext,
  type Receiver,
  type SignatureProfile,
  standardWebhooks,
  type WebhookHandlerError,
} from '../../src/index.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';
import { itHandsTheTenantOff } from './queue-tenants-conformance.js';

export interface Engine<Q extends DurableQueue> {
  /** A queue on a name of its own (the test's run id in it), retrying `attempts` times. */
  queue(attempts: number): Q;
  worker(
    receiver: ReturnType<typeof createReceiver>,
    queue: Q,
    concurrency: number,
    options?: { handlerTimeoutMs?: number },
  ): Promise<DurableWorker>;
  /** A queue whose engine cannot be reached. */
  unreachable(): Q;
  /** Removes everything the queues of this run left in the engine. */
  cleanup(): Promise<void>;
}

/** A secret in the Standard Webhooks form, whose profile signs a message id. */
const WHSEC = `whsec_${Buffer.from('durable-conformance-secret').toString('base64')}`;

/** What every durable queue must do, run against the real engine. */
export function describeDurableQueue<Q extends DurableQueue>(name: string, engine: Engine<Q>) {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await engine.cleanup();
  });
  const setUp = (attempts: number, profile?: SignatureProfile) => {
    const queue = engine.queue(attempts);
    const receiver = profile
      ? createReceiver({ secrets: WHSEC, queue, profile })
      : createReceiver({ secrets: SECRET, queue });
    closers.push(() => queue.close?.() ?? Promise.resolve());
    return { queue, receiver };
  };
  const start = async (
    receiver: ReturnType<typeof createReceiver>,
    queue: Q,
    concurrency = 4,
    options: { handlerTimeoutMs?: number } = {},
  ) => {
    const worker = await engine.worker(receiver, queue, concurrency, options);
    closers.push(() => worker.close());
    return worker;
  };

  describe(`${name}: durable acknowledgement`, () => {
    it('answers 202 once the job is held, 409 while it waits, then 200 duplicate once a worker ran it', async () => {
      const { queue, receiver } = setUp(3);
      const event = deliveredEvent();
      const seen: HandlerContext[] = [];
      const ran = gate();
      receiver.on('message.delivered', (got, ctx) => {
        expect(got).toEqual(event);
        seen.push(ctx);
        ran.open();
      });
      const first = await receiver.receive(delivery(event));
      expectAccepted(first, 202);
      expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
      const worker = await start(receiver, queue);
      await ran.opened;
      await until(() => worker.counters().completed === 1);
      expectAccepted(await copyOfCompleted(receiver, event), 200, true);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({
        requestId: first.requestId,
        mode: 'live',
        dedupeKey: `live:${event.id}`,
        attempt: 1,
        tx: undefined,
      });
      await worker.close();
    });

    it('keeps two events apart whose ids differ only in a lone surrogate, and runs each once', async () => {
      const { queue, receiver } = setUp(1);
      const base = deliveredEvent().id;
      const events = [`${base}\ud800`, `${base}\udc00`, `${base}\ufffd`].map((id) =>
        deliveredEvent({}, { id }),
      );
      const ran: string[] = [];
      receiver.on('message.delivered', (got) => {
        ran.push(got.id as string);
      });
      for (const event of events) expectAccepted(await receiver.receive(delivery(event)), 202);
      const worker = await start(receiver, queue);
      await until(() => worker.counters().completed === events.length);
      expect(ran.sort()).toEqual(events.map((event) => event.id).sort());
      for (const event of events) expectAccepted(await copyOfCompleted(receiver, event), 200, true);
      await worker.close();
    });

    it("gives a worker's handlers the context the receiver's direct path gives, messageId included", async () => {
      const { queue, receiver } = setUp(1, standardWebhooks);
      const direct = createReceiver({ secrets: WHSEC, profile: standardWebhooks });
      const seen: HandlerContext[] = [];
      const ran = gate();
      for (const one of [direct, receiver]) {
        one.on('message.delivered', (_event, ctx) => {
          seen.push(ctx);
          if (one === receiver) ran.open();
        });
      }
      const signed = createSignedRequest(createEvent('message.delivered'), {
        secret: WHSEC,
        profile: standardWebhooks,
      });
      const request = { method: 'POST', headers: signed.headers, rawBody: signed.body };
      expectAccepted(await direct.receive(request), 200);
      expectAccepted(await receiver.receive(request), 202);
      await start(receiver, queue);
      await ran.opened;
      const [viaReceiver, viaWorker] = seen as [HandlerContext, HandlerContext];
      expect(viaReceiver.messageId).toBe(signed.headers['webhook-id']);
      const { requestId: _direct, ...directFields } = viaReceiver;
      const { requestId: _durable, attempt, ...workerFields } = viaWorker;
      expect(attempt).toBe(1);
      expect(workerFields).toEqual(directFields);
    });

    it('retries a failing handler and dead-letters it after the last attempt, telling onError', async () => {
      const { queue, receiver } = setUp(2);
      const event = deliveredEvent();
      const { attempts, told, reported } = recordAttempts(receiver, () => {
        throw new Error('always failing');
      });
      expectAccepted(await receiver.receive(delivery(event)), 202);
      const worker = await start(receiver, queue);
      await reported.opened;
      expect(attempts).toEqual([1, 2]);
      const [error, context] = told[0] as [WebhookHandlerError, ErrorContext];
      expect(error.code).toBe('handler_failed');
      expect((error.cause as Error).message).toBe('always failing');
      expect(context).toMatchObject({
        reason: 'handler_failed',
        eventId: event.id,
        mode: 'live',
        attempt: 2,
        attempts: 2,
      });
      // The event is held in the dead-letter: a redelivery is a duplicate, not a second job.
      await until(async () => (await receiver.receive(delivery(event))).status === 200);
      await until(() => receiver.metrics().durable?.deadLettered === 1);
      expect(worker.counters()).toMatchObject({ retried: 1, deadLettered: 1, completed: 0 });
      const registry = new Registry();
      registerMetrics(receiver, { registry });
      const text = await registry.metrics();
      expect(text).toContain('messaging_webhooks_durable_dead_letters 1');
      expect(text).toMatch(/messaging_webhooks_durable_jobs_waiting 0\n/);
    });

    it('close() lets running jobs finish and leaves unstarted ones queued', async () => {
      const { queue, receiver } = setUp(1);
      const events = [deliveredEvent(), deliveredEvent(), deliveredEvent()];
      const started = gate();
      const release = gate();
      const finished: string[] = [];
      receiver.on('message.delivered', async (event) => {
        started.open();
        await release.opened;
        finished.push(event.id as string);
      });
      for (const event of events) expectAccepted(await receiver.receive(delivery(event)), 202);
      const worker = await start(receiver, queue, 1);
      await started.opened;
      const closing = worker.close();
      release.open();
      await closing;
      expect(finished).toHaveLength(1);
      const rest = events.filter((event) => event.id !== finished[0]);
      for (const event of rest)
        expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
      await until(() => receiver.metrics().durable?.waiting === 2);
    });

    it('fails a handler that never returns at handlerTimeoutMs, retries it, dead-letters it, and still closes', async () => {
      const { queue, receiver } = setUp(2);
      const event = deliveredEvent();
      const { attempts, told, reported } = recordAttempts(receiver, () => new Promise(() => {}));
      expectAccepted(await receiver.receive(delivery(event)), 202);
      const worker = await start(receiver, queue, 4, { handlerTimeoutMs: 300 });
      await reported.opened;
      expect(attempts).toEqual([1, 2]);
      const [error, context] = told[0] as [WebhookHandlerError, ErrorContext];
      expect(error.code).toBe('handler_timeout');
      expect(context).toMatchObject({
        reason: 'handler_timeout',
        eventId: event.id,
        attempt: 2,
        attempts: 2,
      });
      await until(async () => (await receiver.receive(delivery(event))).status === 200);
      // Both handlers still hang: close() does not wait for them.
      await worker.close();
      expect(worker.counters()).toMatchObject({ running: 0, retried: 1, deadLettered: 1 });
    }, 20_000);

    it('close({ timeoutMs }) returns once it passed, and the job it cut off runs again', async () => {
      const { queue, receiver } = setUp(3);
      const event = deliveredEvent();
      const attempts: number[] = [];
      const started = gate();
      const retried = gate();
      receiver.on('message.delivered', (_event, ctx) => {
        attempts.push(ctx.attempt as number);
        started.open();
        if (ctx.attempt === 1) return new Promise(() => {});
        retried.open();
      });
      expectAccepted(await receiver.receive(delivery(event)), 202);
      const first = await start(receiver, queue, 1, { handlerTimeoutMs: 60_000 });
      await started.opened;
      const began = Date.now();
      await first.close({ timeoutMs: 200 });
      expect(Date.now() - began).toBeLessThan(5000);
      await start(receiver, queue, 1);
      await retried.opened;
      expect(attempts).toEqual([1, 2]);
    }, 20_000);

    it('settles each job as its handlers end: a finished event is a duplicate while another job still runs', async () => {
      const { queue, receiver } = setUp(1);
      const slow = deliveredEvent();
      const fast = deliveredEvent();
      const slowStarted = gate();
      const release = gate();
      receiver.on('message.delivered', async (event) => {
        if (event.id !== slow.id) return;
        slowStarted.open();
        await release.opened;
      });
      expectAccepted(await receiver.receive(delivery(slow)), 202);
      expectAccepted(await receiver.receive(delivery(fast)), 202);
      const worker = await start(receiver, queue, 2);
      await slowStarted.opened;
      await until(() => worker.counters().completed === 1);
      // pg-boss settles a fetched batch together: the finished job would stay active, its event 409.
      await until(async () => (await receiver.receive(delivery(fast))).status === 200, 5000);
      release.open();
      await until(() => worker.counters().completed === 2);
    });

    it('answers 503 queue_unavailable when the engine cannot take the job, and tells onError', async () => {
      const queue = engine.unreachable();
      closers.push(() => queue.close?.() ?? Promise.resolve());
      const receiver = createReceiver({ secrets: SECRET, queue });
      const told: string[] = [];
      receiver.onError((error) => {
        told.push(error.code);
      });
      const outcome = await receiver.receive(delivery(deliveredEvent()));
      expectRejected(outcome, 503, 'queue_unavailable');
      expect(outcome.headers['retry-after']).toBe('5');
      expect(told).toEqual(['queue_unavailable']);
    }, 15_000);

    itHandsTheTenantOff(
      () => setUp(1).queue,
      (receiver, queue) => start(receiver, queue),
    );
  });
}

/** Runs `handle` for every attempt of the queue's event, recording the attempt numbers and what onError hears. */
/**
 * The answer to a copy of an event once its job is recorded completed. A worker counts a job when its handlers
 * succeed and the engine records the completion just after: a copy sent in between is answered 409 in progress
 * (and not run), so it is sent again until the answer is another.
 */
async function copyOfCompleted(receiver: Receiver, event: Parameters<typeof delivery>[0]): Promise<Outcome> {
  let answer: Outcome | undefined;
  await until(
    async () => {
      answer = await receiver.receive(delivery(event));
      return !(answer.status === 409 && answer.reason === 'event_in_progress');
    },
    { what: 'a copy answered other than 409 event_in_progress' },
  );
  return answer as Outcome;
}

function recordAttempts(receiver: Receiver, handle: () => Promise<void> | void) {
  const attempts: number[] = [];
  const told: [WebhookHandlerError, ErrorContext][] = [];
  const reported = gate();
  receiver.on('message.delivered', (_event, ctx) => {
    attempts.push(ctx.attempt as number);
    return handle();
  });
  receiver.onError((error, ctx) => {
    told.push([error, ctx]);
    reported.open();
  });
  return { attempts, told, reported };
}
