import { describe, expect, it } from 'vitest';
import type { DurableJob } from '../../src/extend.js';
import type { DurableQueue } from '../../src/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';

/** The receiver's side of the handoff, with a queue that records what it is given and answers as told. */
function recordingQueue(answer: () => Promise<'enqueued' | 'in_progress' | 'duplicate'>) {
  const jobs: { job: DurableJob; deadlineMs: number }[] = [];
  const queue: DurableQueue = {
    enqueue(job, deadlineMs) {
      jobs.push({ job, deadlineMs });
      return answer();
    },
  };
  return { queue, jobs };
}

describe('a receiver with a durable queue', () => {
  it('refuses a queue without enqueue at creation', () => {
    expect(() => createReceiver({ secrets: SECRET, queue: {} as DurableQueue })).toThrow(WebhookConfigError);
  });

  it('hands the verified event over under its dedupe key, with the context its handlers will get', async () => {
    const { queue, jobs } = recordingQueue(async () => 'enqueued');
    const receiver = createReceiver({ secrets: SECRET, queue });
    let ran = false;
    receiver.on('message.delivered', () => {
      ran = true;
    });
    const event = deliveredEvent();
    const outcome = await receiver.receive(delivery(event));
    expectAccepted(outcome, 202);
    expect(ran).toBe(false);
    expect(jobs).toHaveLength(1);
    const [{ job, deadlineMs }] = jobs as [{ job: DurableJob; deadlineMs: number }];
    expect(deadlineMs).toBeGreaterThan(0);
    expect(job.key).toBe(`live:${event.id}`);
    expect(job.event).toEqual(event);
    expect(job.ctx).toEqual({
      requestId: outcome.requestId,
      mode: 'live',
      timestamp: expect.any(Number),
      dedupeKey: `live:${event.id}`,
    });
  });

  it('never hands over what failed verification or parsing', async () => {
    const { queue, jobs } = recordingQueue(async () => 'enqueued');
    const receiver = createReceiver({ secrets: SECRET, queue });
    expectRejected(
      await receiver.receive(delivery(deliveredEvent(), { secret: 'whsec_another_one_entirely' })),
      401,
      'signature_mismatch',
    );
    expectRejected(
      await receiver.receive(delivery({ type: 'message.delivered', data: {} })),
      422,
      'invalid_event',
    );
    expect(jobs).toEqual([]);
  });

  it('answers what the engine holds: in progress 409, duplicate 200, a failure 503 queue_unavailable told to onError', async () => {
    const answers = ['in_progress', 'duplicate'] as const;
    let next = 0;
    const { queue } = recordingQueue(async () => {
      const answer = answers[next++];
      if (!answer) throw new Error('engine down');
      return answer;
    });
    const receiver = createReceiver({ secrets: SECRET, queue, retryAfterSeconds: 2 });
    const told: string[] = [];
    receiver.onError((error, ctx) => {
      told.push(`${error.code} ${ctx.eventId}: ${error.message}`);
    });
    const event = deliveredEvent();
    const inProgress = await receiver.receive(delivery(event));
    expectRejected(inProgress, 409, 'event_in_progress');
    expect(inProgress.headers['retry-after']).toBe('2');
    expectAccepted(await receiver.receive(delivery(event)), 200, true);
    const down = await receiver.receive(delivery(event));
    expectRejected(down, 503, 'queue_unavailable');
    expect(down.headers['retry-after']).toBe('2');
    // The engine is what is down, not a dedupe store: the answer and onError say so, with the engine's error.
    expect(JSON.parse(down.body).error.message).toMatch(/job engine/);
    expect(JSON.parse(down.body).error.message).not.toMatch(/dedupe store/);
    expect(told).toEqual([
      `queue_unavailable ${event.id}: The job engine did not take the event. Cause: engine down`,
    ]);
  });
});
