import type { DurableJob, DurableQueue, EnqueueResult } from '../durable/port.js';
import type { Keyed } from './5-dedupe-key.js';
import type { Report } from './report.js';
import { ACCEPTED, DUPLICATE, type Stop } from './stop.js';

/** How long the engine gets to hold a job before the request is answered 503 queue_unavailable. */
export const ENQUEUE_DEADLINE_MS = 3000;

/**
 * Durable acknowledgement, in place of claim, execute and settle: the event goes to the job engine under its
 * dedupe key, and the answer says what the engine holds. 202 only once the engine has the job, so a receiver
 * killed before that answered nothing and the service's retry delivers the event again; a failed or late
 * enqueue is 503, retried the same way.
 */
export async function handOff(keyed: Keyed, queue: DurableQueue, report: Report): Promise<Stop> {
  const job: DurableJob = { key: keyed.key, event: keyed.event, ctx: keyed.handlerContext };
  let result: EnqueueResult;
  try {
    result = await queue.enqueue(job, ENQUEUE_DEADLINE_MS, (warning) => {
      void report('persistence_unchecked', warning, undefined, keyed.context);
    });
  } catch (cause) {
    // The engine's own words (unreachable, late, or refused as volatile) are what the operator needs: the
    // error's message ends with its cause's.
    await report('queue_unavailable', 'The job engine did not take the event.', cause, keyed.context);
    return { stop: 'queue_unavailable' };
  }
  if (result === 'enqueued') return ACCEPTED;
  if (result === 'duplicate') return DUPLICATE;
  return { stop: 'event_in_progress' };
}
