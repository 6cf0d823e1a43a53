import { WebhookHandlerError } from '../contract/errors.js';
import { TRACE_ATTRIBUTE, type TraceCarrier, type TraceSpan, type Tracing } from '../contract/tracing.js';
import type { DurableJob } from './port.js';

/** A worker's tracing: the port, and the engine and queue its spans name. */
export interface JobTracing {
  tracing: Tracing;
  /** `bullmq` or `pg-boss`: messaging.system. */
  system: string;
  /** The queue's name: messaging.destination.name. */
  destination: string;
}

/** What an engine keeps of a job's failed attempts, so that the next attempt's span links to them. */
export interface AttemptTrace {
  /** The span contexts of the job's earlier failed attempts, oldest first. */
  earlier: readonly TraceCarrier[];
  /** Keeps this failed attempt's span context with the job, for the attempt that retries it. */
  keep(attempts: TraceCarrier[]): Promise<unknown> | undefined;
}

/** The CONSUMER span of one attempt: in the trace of the delivery that enqueued the job. */
export function startJobSpan(
  traced: JobTracing,
  job: DurableJob,
  attempt: number,
  attempts: number,
  earlier: readonly TraceCarrier[],
): TraceSpan {
  return traced.tracing.startJob({
    name: `process ${traced.destination}`,
    parent: job.trace,
    links: earlier,
    attributes: {
      'messaging.system': traced.system,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': traced.destination,
      'messaging.message.id': job.event.id,
      [TRACE_ATTRIBUTE.requestId]: job.ctx.requestId,
      [TRACE_ATTRIBUTE.eventType]: job.event.type,
      [TRACE_ATTRIBUTE.eventId]: job.event.id,
      [TRACE_ATTRIBUTE.attempt]: attempt,
      [TRACE_ATTRIBUTE.attempts]: attempts,
    },
  });
}

/** Ends an attempt's span: completed, or failed with its code, to be retried or not. */
export function endJobSpan(span: TraceSpan, failure?: { code: string; retried: boolean }): void {
  if (failure === undefined) {
    span.setAttributes({ [TRACE_ATTRIBUTE.outcome]: 'completed' });
  } else {
    span.setAttributes({
      [TRACE_ATTRIBUTE.outcome]: failure.retried ? 'retried' : 'failed',
      [TRACE_ATTRIBUTE.reason]: failure.code,
    });
    span.fail(failure.code);
  }
  span.end();
}

/** A job runner's attempt, given the span it runs its handlers under. */
type Attempt = (job: DurableJob, attempt: number, attempts: number, span: TraceSpan) => Promise<void>;

/**
 * Runs each attempt in its CONSUMER span; a failed attempt that will be retried is kept with the job
 * (`trace.keep`) so that the retry's span links to it.
 */
export function tracedRun(traced: JobTracing, attemptRun: Attempt) {
  return async (job: DurableJob, attempt: number, attempts: number, trace?: AttemptTrace): Promise<void> => {
    const span = startJobSpan(traced, job, attempt, attempts, trace?.earlier ?? []);
    try {
      await attemptRun(job, attempt, attempts, span);
    } catch (error) {
      const retried = attempt < attempts;
      endJobSpan(span, {
        code: error instanceof WebhookHandlerError ? error.code : 'handler_failed',
        retried,
      });
      if (retried && trace) await keep(trace, span);
      throw error;
    }
    endJobSpan(span);
  };
}

async function keep(trace: AttemptTrace, span: TraceSpan): Promise<void> {
  try {
    await trace.keep([...trace.earlier, span.carrier()]);
  } catch {
    // Only the link is lost: the retry runs all the same.
  }
}
