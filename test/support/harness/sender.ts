import { setTimeout as sleep } from 'node:timers/promises';
import { createEvent, createSignedRequest } from '../../../src/testing.js';

export interface Attempt {
  eventId: string;
  status: number;
  /** The error code of a rejection; 'network' when the request failed without an answer. */
  code?: string;
  duplicate: boolean;
  retryAfter: string | null;
  startedAt: number;
  endedAt: number;
}

export interface Delivery {
  eventId: string;
  /** Where attempt number `attempt` goes (the sender spreads retries over the instances). */
  target(attempt: number): string;
}

export interface SendOptions {
  secret: string;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** Every delivery must be acknowledged (2xx) before this time (Date.now()), or the run fails. */
  deadline: number;
  onAttempt?(attempt: Attempt): void;
}

/** Events with ids the test chooses, so that their evidence can be looked up. */
export function eventIds(run: string, count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `evt_${run}_${String(from + i).padStart(5, '0')}`);
}

/**
 * Plays the service: delivers each delivery until it is acknowledged with a 2xx, re-signing every retry
 * (fresh timestamp), backing off a little after a failure. Returns every attempt.
 */
export async function deliverAll(deliveries: Delivery[], options: SendOptions): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++] as Delivery;
      await deliverOne(delivery, options, attempts);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return attempts;
}

async function deliverOne(delivery: Delivery, options: SendOptions, attempts: Attempt[]): Promise<void> {
  const event = createEvent('message.delivered', { id: delivery.eventId });
  for (let number = 0; ; number++) {
    if (Date.now() > options.deadline) {
      throw new Error(`${delivery.eventId} was still not acknowledged after ${number} attempts`);
    }
    const signed = createSignedRequest(event, { secret: options.secret });
    const attempt: Attempt = {
      eventId: delivery.eventId,
      status: 0,
      duplicate: false,
      retryAfter: null,
      startedAt: Date.now(),
      endedAt: 0,
    };
    try {
      const response = await fetch(delivery.target(number), {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as { duplicate?: boolean; error?: { code: string } };
      attempt.status = response.status;
      attempt.duplicate = body.duplicate === true;
      attempt.retryAfter = response.headers.get('retry-after');
      if (body.error) attempt.code = body.error.code;
    } catch {
      attempt.code = 'network';
    }
    attempt.endedAt = Date.now();
    attempts.push(attempt);
    options.onAttempt?.(attempt);
    if (attempt.status >= 200 && attempt.status < 300) return;
    // A sender's backoff between retries, as the service's own; it paces retries, never decides an outcome.
    await sleep(attempt.status === 503 || attempt.code === 'network' ? 100 : 20);
  }
}

/** Counts attempts by "status code" (e.g. "200", "200 duplicate", "409 event_in_progress"). */
export function tally(attempts: Attempt[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, code, duplicate } of attempts) {
    const label = [status, duplicate ? 'duplicate' : code].filter(Boolean).join(' ');
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}
