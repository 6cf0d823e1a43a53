import { TIMED_OUT, whenLate, withTimeout } from '../base/deadline.js';
import { option, rules } from '../base/options.js';
import type { Claims } from '../claims/claim.js';
import type { ErrorContext } from '../contract/context.js';
import { type DeadLetterCode, WebhookHandlerError } from '../contract/errors.js';
import { checkTracing, type TraceSpan } from '../contract/tracing.js';
import { traceHandlers } from '../pipeline/traced.js';
import { DEFAULT_RETENTION_MS } from '../stores/retention.js';
import type { DedupeStore } from '../stores/types.js';
import { createInbox, DEFAULT_LEASE_MS, type InboxRun, runInInbox } from './inbox-run.js';
import { type AttemptTrace, tracedRun } from './job-span.js';
import type {
  DispatchingReceiver,
  DurableJob,
  DurableQueue,
  DurableWorkerOptions,
  JobEngine,
  RetryOptions,
  WorkerCounters,
} from './port.js';
import { runDurations } from './run-durations.js';

export const DEFAULT_ATTEMPTS = 5;
export const DEFAULT_BACKOFF_MS = 1000;
/** How long a job's handlers may run before the attempt counts as failed (handler_timeout). */
export const DEFAULT_HANDLER_TIMEOUT_MS = 60_000;

/** Validated retry schedule; a mistake fails when the worker is created, not on the first failure. */
export function retrySchedule(options: RetryOptions): Required<RetryOptions> {
  return {
    attempts: option('attempts', options.attempts, DEFAULT_ATTEMPTS, rules.whole({ min: 1 })),
    backoffMs: option(
      'backoffMs',
      options.backoffMs,
      DEFAULT_BACKOFF_MS,
      rules.number({ min: 0, unit: 'milliseconds' }),
    ),
  };
}

/** A time option of a worker: a whole number of milliseconds, at least 1. */
const MILLISECONDS = rules.whole({ min: 1, unit: 'milliseconds' });

/**
 * The runner of a worker's options, validated: its handler deadline, with a `store` its inbox, with `tracing`
 * its spans (named after the engine and the queue `destination`).
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export function workerRunner<Q extends DurableQueue, S extends DedupeStore<any> | undefined>(
  options: DurableWorkerOptions<Q, S>,
  engine: JobEngine,
  destination: string,
): WorkerRunner {
  const { receiver, store } = options;
  const handlerTimeoutMs = option(
    'handlerTimeoutMs',
    options.handlerTimeoutMs,
    DEFAULT_HANDLER_TIMEOUT_MS,
    MILLISECONDS,
  );
  const inbox =
    store === undefined
      ? undefined
      : createInbox(receiver, {
          store,
          leaseMs: option('leaseMs', options.leaseMs, DEFAULT_LEASE_MS, MILLISECONDS),
          retentionMs: option(
            'inboxRetentionMs',
            options.inboxRetentionMs,
            DEFAULT_RETENTION_MS,
            MILLISECONDS,
          ),
        });
  const runner = createJobRunner(receiver, handlerTimeoutMs, inbox);
  const tracing = checkTracing(options.tracing);
  return {
    ...runner,
    run: tracing
      ? tracedRun({ tracing, system: engine.name, destination }, runner.run)
      : (job: DurableJob, attempt: number, attempts: number) => runner.run(job, attempt, attempts),
    traced: tracing !== undefined,
  };
}

/**
 * A worker's runner. With tracing (`traced`), the engine gives each run what it kept of the job's failed
 * attempts, for the links of the attempt's span.
 */
export interface WorkerRunner extends Omit<JobRunner, 'run'> {
  run(job: DurableJob, attempt: number, attempts: number, trace?: AttemptTrace): Promise<void>;
  readonly traced: boolean;
}

/** A run the worker may give up on (its deadline passed, or close() cut it off): its claim is let go. */
interface Running extends InboxRun {
  giveUp(error: WebhookHandlerError): void;
}

/** A run the worker may give up on, and what rejects once it does. */
function runToGiveUp(): { entry: Running; givenUp: Promise<never> } {
  let reject!: (error: unknown) => void;
  const givenUp = new Promise<never>((_, rejectRun) => {
    reject = rejectRun;
  });
  const entry: Running = {
    gaveUp: false,
    giveUp(error) {
      entry.gaveUp = true;
      // The claim goes back, so the retry can take it; a late commit of this run is refused.
      void entry.claim?.abandon();
      reject(error);
    },
  };
  return { entry, givenUp };
}

/**
 * Runs a job's event through the receiver's handlers, the engine-independent half of a worker: the
 * handlers get the context the receiver built plus the 1-based attempt. A run fails with a
 * WebhookHandlerError whose code says why (handler_failed, or handler_timeout once `handlerTimeoutMs`
 * passed: the handler cannot be stopped, but the engine is told at once and retries the job); the engine
 * side tells onError when a job reaches its dead-letter (deadLettered()).
 */
export function createJobRunner(
  receiver: DispatchingReceiver,
  handlerTimeoutMs: number,
  inbox?: Claims<unknown>,
) {
  const counters: WorkerCounters = { running: 0, completed: 0, retried: 0, deadLettered: 0 };
  const running = new Set<Running>();
  const durations = runDurations();

  async function run(job: DurableJob, attempt: number, attempts: number, span?: TraceSpan): Promise<void> {
    counters.running++;
    const { entry, givenUp } = runToGiveUp();
    running.add(entry);
    const timedOut = () => {
      const message = `The handlers of ${job.key} ran past handlerTimeoutMs (${handlerTimeoutMs} ms); the attempt counts as failed.`;
      entry.giveUp(new WebhookHandlerError('handler_timeout', message));
    };
    try {
      // The run ends with its handlers, or when it is given up on: at its deadline, or by close() (cutOff).
      const ran = Promise.race([dispatch(receiver, inbox, job, attempt, entry, span), givenUp]);
      await whenLate(ran, handlerTimeoutMs, timedOut);
      counters.completed++;
    } catch (error) {
      if (attempt < attempts) counters.retried++;
      throw error;
    } finally {
      running.delete(entry);
      counters.running--;
    }
  }

  /** close() ran out of time: every running job fails its attempt now, so the engine can let go of it. */
  function cutOff(): void {
    for (const entry of running) {
      entry.giveUp(
        new WebhookHandlerError('shutting_down', 'The worker closed before the handlers finished.'),
      );
    }
  }

  /** Tells onError that a job is in the engine's dead-letter, and why. */
  async function deadLettered(
    job: DurableJob,
    reason: DeadLetterCode,
    cause: unknown,
    attempt: number,
    attempts: number,
  ): Promise<void> {
    counters.deadLettered++;
    // The handler's own error, not the wrapper the run threw to the engine.
    const root =
      cause instanceof WebhookHandlerError && cause.code === 'handler_failed' ? cause.cause : cause;
    const message = `The job of ${job.key} went to the dead-letter (${reason}) after attempt ${attempt} of ${attempts}.`;
    await receiver.reportError(new WebhookHandlerError(reason, message, { cause: root }), {
      ...errorContext(job, reason),
      attempt,
      attempts,
    });
  }

  return {
    run: (...args: Parameters<typeof run>) => durations.time(() => run(...args)),
    cutOff,
    deadLettered,
    handlerTimeoutMs,
    counters: (): WorkerCounters => ({ ...counters, durations: durations.snapshot() }),
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;

/** One attempt of a job: its handlers, inside the event's claim when the worker has an inbox. */
async function dispatch(
  receiver: DispatchingReceiver,
  inbox: Claims<unknown> | undefined,
  job: DurableJob,
  attempt: number,
  run: Running,
  span: TraceSpan | undefined,
): Promise<void> {
  const dispatching = (tx: unknown) => receiver.dispatch(job.event, { ...job.ctx, attempt, tx });
  // With tracing, the handlers run in a span of their own under the attempt's.
  const handle = span ? traceHandlers(span, dispatching) : dispatching;
  try {
    if (inbox) await runInInbox(inbox, job.key, errorContext(job, 'handler_failed'), handle, run);
    else await handle(undefined);
  } catch (cause) {
    if (cause instanceof WebhookHandlerError && cause.code === 'store_unavailable') throw cause;
    throw new WebhookHandlerError('handler_failed', `A handler for ${job.event.type} failed.`, { cause });
  }
}

/**
 * Stops a worker: `stop` lets running jobs finish (each within handlerTimeoutMs); past `timeoutMs` the
 * running jobs are cut off (their attempt fails and the engine retries them) so the stop can end.
 */
export async function closeWorker(
  stop: () => Promise<void>,
  runner: Pick<JobRunner, 'cutOff'>,
  timeoutMs: number | undefined,
): Promise<void> {
  const stopping = stop();
  if (timeoutMs === undefined) return stopping;
  if ((await withTimeout(stopping, timeoutMs)) === TIMED_OUT) runner.cutOff();
  await stopping;
}

function errorContext(job: DurableJob, reason: DeadLetterCode): ErrorContext {
  const context: ErrorContext = {
    requestId: job.ctx.requestId,
    reason,
    eventType: job.event.type,
    mode: job.ctx.mode,
  };
  if (typeof job.event.id === 'string') context.eventId = job.event.id;
  if (typeof job.ctx.tenant === 'string') context.tenant = job.ctx.tenant;
  return context;
}

/** The dead-letter reason an engine's failure carries: the run's own code, else what the engine said. */
export function deadLetterReason(error: unknown, engine: JobEngine): DeadLetterCode {
  if (error instanceof WebhookHandlerError) {
    return error.code === 'handler_timeout' ? 'handler_timeout' : 'handler_failed';
  }
  return engine.failureReason(String((error as Error)?.message ?? error)) ?? 'handler_failed';
}
