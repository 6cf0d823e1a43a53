import { callUser, enqueueIsBounded, withDeadline } from '../base/deadline.js';
import type { Report } from '../claims/report.js';
import type { DurableJob, DurableQueue, EnqueueResult } from '../contract/queue.js';
import { TRACE_ATTRIBUTE, type TraceSpan } from '../contract/tracing.js';
import type { Keyed } from './3-event.js';
import { ACCEPTED, DUPLICATE, type Ending } from './ending.js';
import { endStage } from './traced.js';

/** How long the engine gets to hold a job before the request is answered 503 queue_unavailable. */
export const ENQUEUE_DEADLINE_MS = 3000;

/**
 * Durable acknowledgement, in place of claim, execute and settle: the event goes to the job engine under its
 * dedupe key, and the answer says what the engine holds. 202 only once the engine has the job, so a receiver
 * killed before that answered nothing and the service's retry delivers the event again; a failed or late
 * enqueue is 503, retried the same way. With `span`, the handoff is a PRODUCER span under it, whose context
 * the job carries to the worker's span.
 */
export function handOff(
  keyed: Keyed,
  queue: DurableQueue,
  report: Report,
  span?: TraceSpan,
): Promise<Ending> {
  const job: DurableJob = { key: keyed.key, event: keyed.event, ctx: keyed.handlerContext };
  if (!span) return enqueue(keyed, job, queue, report);
  if (span.recording === false) {
    // Dropped by the sampler: the job carries its context alone, so the worker's attempt stays unsampled too.
    job.trace = span.carrier();
    return enqueue(keyed, job, queue, report);
  }
  const producing = span.child('handoff', 'producer');
  producing.setAttributes({
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'handoff',
    'messaging.system': engineOf(queue),
    'messaging.message.id': keyed.event.id,
    [TRACE_ATTRIBUTE.eventType]: keyed.event.type,
  });
  job.trace = producing.carrier();
  return enqueue(keyed, job, queue, report).then((ending) => {
    endStage(
      producing,
      'ack' in ending ? ending.ack : ending.stop,
      (reason) => reason === 'queue_unavailable',
    );
    return ending;
  });
}

async function enqueue(keyed: Keyed, job: DurableJob, queue: DurableQueue, report: Report): Promise<Ending> {
  let result: EnqueueResult;
  try {
    const enqueuing = callUser(() =>
      queue.enqueue(job, ENQUEUE_DEADLINE_MS, (warning) => {
        void report('persistence_unchecked', warning, undefined, keyed.context);
      }),
    );
    // The engine bounds its own enqueue; a queue written by anyone else is held to the same deadline here.
    result = await (enqueueIsBounded(queue)
      ? enqueuing
      : withDeadline(Promise.resolve(enqueuing), ENQUEUE_DEADLINE_MS + 1000, "The job engine's enqueue()"));
    if (!ENQUEUE_RESULTS.has(result)) throw unknownResult(result);
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

const ENQUEUE_RESULTS = new Set<unknown>(['enqueued', 'duplicate', 'in_progress']);

function unknownResult(result: unknown): Error {
  const shown = typeof result === 'string' ? JSON.stringify(result.slice(0, 40)) : `a ${typeof result}`;
  return new Error(
    `The job engine's enqueue() resolved ${shown}: it must resolve 'enqueued', 'duplicate' or 'in_progress' (see DurableQueue).`,
  );
}

/** The job engine's name (bullmqQueue: `bullmq`, pgBossQueue: `pg-boss`), for the semantic conventions' messaging.system. */
function engineOf(queue: DurableQueue): string | undefined {
  const { engine } = queue as { engine?: unknown };
  return typeof engine === 'string' ? engine : undefined;
}
