// The route a user writes by hand to get the receiver's guarantees without this library, shared by the
// benchmarks that measure the receiver against it: stripe-node's constructEvent on the raw body, the event's zod
// schema (safeParse), an atomic claim in a Map (a finished event is answered as a duplicate, one in progress 409,
// a failed one released for the retry), the handler run through p-queue (bounded concurrency), then completion.
// The body deadline is the framework's own (its server's requestTimeout), set where the server is made.
import PQueue from 'p-queue';
import Stripe from 'stripe';
import { z } from 'zod';
import { defaultEvents } from '../dist/src/index.js';

/**
 * The job options a user copies for `queue.add` by hand: the library's defaults (5 attempts, exponential backoff
 * from 1 s with jitter, completed jobs kept 7 days, failed ones kept).
 */
export const BULLMQ_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000, jitter: 0.5 },
  removeOnComplete: { age: 7 * 24 * 3600 },
  removeOnFail: false,
};

/** The answers of the hand route: status and a JSON body, as a framework's reply helpers send them. */
export const ANSWERS = {
  received: { status: 200, body: { received: true } },
  duplicate: { status: 200, body: { received: true, duplicate: true } },
  unsigned: { status: 401, body: { error: 'invalid signature' } },
  invalid: { status: 422, body: { error: 'invalid event' } },
  inProgress: { status: 409, body: { error: 'in progress' } },
  failed: { status: 500, body: { error: 'handler failed' } },
};

/**
 * One hand route's state: `receive(rawBody, signatureHeader)` resolves one of ANSWERS. `onEvent` is the user's
 * handler for message.delivered.
 */
/** The zod schema a hand route checks a message.delivered event with, as the receiver's catalogue does. */
export function deliveredSchema() {
  return z.looseObject({
    id: z.string(),
    type: z.literal('message.delivered'),
    created_at: z.iso.datetime({ offset: true }).optional(),
    data: defaultEvents['message.delivered'],
  });
}

export function handRoute(secret, onEvent, concurrency = 32) {
  const schema = deliveredSchema();
  const seen = new Map();
  const queue = new PQueue({ concurrency });
  const handlers = { 'message.delivered': onEvent };
  return async function receive(rawBody, signatureHeader) {
    let event;
    try {
      event = Stripe.webhooks.constructEvent(rawBody, signatureHeader, secret);
    } catch {
      return ANSWERS.unsigned;
    }
    const parsed = schema.safeParse(event);
    if (!parsed.success) return ANSWERS.invalid;
    const { id } = parsed.data;
    const state = seen.get(id);
    if (state === 'done') return ANSWERS.duplicate;
    if (state === 'running') return ANSWERS.inProgress;
    seen.set(id, 'running');
    try {
      await queue.add(() => handlers[parsed.data.type]?.(parsed.data));
    } catch {
      seen.delete(id);
      return ANSWERS.failed;
    }
    seen.set(id, 'done');
    return ANSWERS.received;
  };
}
