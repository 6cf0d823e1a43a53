import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { Claim, Claims, Handle, Settlement, Taken } from '../claims/claim.js';
import type { Report } from '../claims/report.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { TraceSpan } from '../contract/tracing.js';
import { type Keyed, withTransaction } from './3-event.js';
import { ACCEPTED, DUPLICATE, type Ending, PROCESSED, type Rejection, SHUTTING_DOWN } from './ending.js';
import type { Executor } from './executor.js';
import { endStage, traceHandlers } from './traced.js';

/** The registered handlers of an event: undefined when it has none. */
export interface Handlers<Tx> {
  dispatchNow(
    event: { type: string; id?: string },
    ctx: Omit<HandlerContext<Tx>, 'attempt'>,
  ): Promise<void> | undefined;
}

export interface RunOptions<Tx> {
  claims: Claims<Tx>;
  executor: Executor;
  handlers: Handlers<Tx>;
  /** Synchronous acknowledgement waits for the settlement (up to `handlerTimeoutMs`); async answers 202 at once. */
  ack: 'sync' | 'async';
  handlerTimeoutMs?: number | undefined;
  /** The platform's hook that keeps async work alive after the answer, when the request brings none. */
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
  report: Report;
  /** Whether close() started: a full executor then answers shutting_down, not overloaded. */
  readonly closing: () => boolean;
}

const OVERLOADED: Rejection = { stop: 'overloaded' };
const HANDLER_TIMEOUT: Rejection = { stop: 'handler_timeout' };

/**
 * Claim, run, settle, in this process: a place on the executor first (a retry of an event turned away here
 * finds it unclaimed), then the event's claim (claims/), whose run on the executor runs the handlers and
 * completes or releases it. The request waits for that, or with `ack: 'async'` is answered 202 at once.
 */
export async function runHere<Tx>(keyed: Keyed, options: RunOptions<Tx>, span?: TraceSpan): Promise<Ending> {
  const { executor } = options;
  if (!executor.reserve()) return options.closing() ? SHUTTING_DOWN : OVERLOADED;
  const claiming = span?.recording === false ? undefined : span?.child('claim');
  const taken = await options.claims.take(keyed.key, keyed.context, handle(keyed, options, span));
  if (claiming) endStage(claiming, outcomeOf(taken), storeFailed);
  if (taken.status !== 'claimed') {
    executor.unreserve();
    return refusalOf(taken) ?? DUPLICATE;
  }
  const work = executor.submit(taken.claim as Claim<unknown>, ABANDONED);
  if (options.ack === 'async') {
    const waitUntil = keyed.request.waitUntil ?? options.waitUntil;
    await keepAlive(waitUntil, work, keyed.context, options.report);
    return ACCEPTED;
  }
  const { handlerTimeoutMs } = options;
  const settled = handlerTimeoutMs === undefined ? await work : await withTimeout(work, handlerTimeoutMs);
  return settled === TIMED_OUT ? HANDLER_TIMEOUT : endingOf(settled);
}

/** The event's handlers, as its claim runs them: with the store's transaction, under a span when traced. */
function handle<Tx>(keyed: Keyed, options: RunOptions<Tx>, span: TraceSpan | undefined): Handle<Tx> {
  const { handlers } = options;
  const dispatch = (tx: Tx) => handlers.dispatchNow(keyed.event, withTransaction(keyed.handlerContext, tx));
  return span ? traceHandlers(span, dispatch) : dispatch;
}

/** How taking the claim went, for its span: only the store failing fails it (a duplicate is the store working). */
function outcomeOf<Tx>(taken: Taken<Tx>): string | undefined {
  return taken.status === 'claimed'
    ? undefined
    : taken.status === 'duplicate'
      ? 'duplicate'
      : refusalOf(taken)?.stop;
}

const storeFailed = (outcome: string) => outcome === 'store_unavailable';

const ABANDONED: Settlement = { status: 'abandoned' };

/** Why a claim was not taken: a duplicate is none (acknowledged), an event held elsewhere or a store failing is. */
function refusalOf<Tx>(taken: Taken<Tx>): Rejection | undefined {
  switch (taken.status) {
    case 'unavailable':
      return { stop: taken.reason };
    case 'in_flight':
      return {
        stop: 'event_in_progress',
        retryAfterSeconds: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
      };
    default:
      return undefined;
  }
}

function endingOf(settled: Settlement): Ending {
  switch (settled.status) {
    case 'completed':
      return PROCESSED;
    case 'abandoned':
      return SHUTTING_DOWN;
    case 'failed':
      return { stop: settled.reason };
  }
}

/** Hands async work to the platform (waitUntil); the event is already queued, so a throwing hook only gets reported. */
async function keepAlive(
  waitUntil: ((work: Promise<unknown>) => void) | undefined,
  work: Promise<unknown>,
  context: ErrorContext,
  report: Report,
): Promise<void> {
  if (!waitUntil) return;
  try {
    waitUntil(work);
  } catch (cause) {
    await report(
      'wait_until_failed',
      'waitUntil threw; the event is processed in this process anyway.',
      cause,
      context,
    );
  }
}
