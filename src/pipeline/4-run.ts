import { type Answer, TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { Executor } from '../base/executor.js';
import type { Claim, Claims, Handle, Settlement, Taken } from '../claims/claim.js';
import type { Report } from '../claims/report.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { TraceSpan } from '../contract/tracing.js';
import { type Keyed, withTransaction } from './3-event.js';
import { ACCEPTED, DUPLICATE, type Ending, PROCESSED, type Rejection, SHUTTING_DOWN } from './ending.js';
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
  /** Where close() giving up finds the requests still waiting. */
  readonly waiting: Waiting;
}

const OVERLOADED: Rejection = { stop: 'overloaded' };
const HANDLER_TIMEOUT: Rejection = { stop: 'handler_timeout' };

/** Where a request waiting on its run is held, so that close() giving up answers it 503 shutting_down. */
export interface Waiting {
  /** Holds `answer` until released; once close() gave up, calls it with shutting_down at once. */
  hold(answer: (ending: Rejection) => void): number;
  release(slot: number, answer: (ending: Rejection) => void): void;
}

/**
 * Claim, run, settle, in this process: a place on the executor first (a retry of an event turned away here
 * finds it unclaimed), then the event's claim (claims/), whose run on the executor runs the handlers and
 * completes or releases it. The request waits for that, or with `ack: 'async'` is answered 202 at once; close()
 * giving up answers it wherever it waits. One promise per request: its resolve is what the executor answers
 * and what close() gives up on (see Run).
 */
export function runHere<Tx>(keyed: Keyed, options: RunOptions<Tx>, span?: TraceSpan): Promise<Ending> {
  if (!options.executor.reserve()) return Promise.resolve(options.closing() ? SHUTTING_DOWN : OVERLOADED);
  return new Promise<Ending>((resolve, reject) => new Run(keyed, options, span, resolve, reject).start());
}

/** One request's run: its state in one object, which the executor answers (an Answer) without a promise. */
class Run<Tx> implements Answer<Settlement>, Answer<Taken<Tx>> {
  readonly #slot: number;
  #claiming: TraceSpan | undefined;

  constructor(
    readonly keyed: Keyed,
    readonly options: RunOptions<Tx>,
    readonly span: TraceSpan | undefined,
    readonly resolve: (ending: Ending) => void,
    readonly reject: (error: unknown) => void,
  ) {
    this.#slot = options.waiting.hold(resolve);
  }

  start(): void {
    const { keyed, options, span } = this;
    try {
      this.#claiming = span?.recording === false ? undefined : span?.child('claim');
      options.claims.take(keyed.key, keyed.context, handle(keyed, options, span), this);
    } catch (error) {
      this.fail(error);
    }
  }

  /** The run's two answers, told apart by their status: the claim taken, then how it settled. */
  settle(answer: Taken<Tx> | Settlement): void {
    try {
      if (answer.status === 'completed' || answer.status === 'failed' || answer.status === 'abandoned')
        this.#end(endingOf(answer));
      else this.#taken(answer);
    } catch (error) {
      // A bug in what runs next still answers the request (the walk's rejection), as an async function would.
      this.fail(error);
    }
  }

  #taken(taken: Taken<Tx>): void {
    const { executor, ack } = this.options;
    if (this.#claiming) endStage(this.#claiming, outcomeOf(taken), storeFailed);
    if (taken.status !== 'claimed') {
      executor.unreserve();
      this.#end(refusalOf(taken) ?? DUPLICATE);
      return;
    }
    const claim = taken.claim as Claim<unknown>;
    const { handlerTimeoutMs } = this.options;
    if (ack === 'sync' && handlerTimeoutMs === undefined) {
      executor.enqueue(claim, ABANDONED, this);
      return;
    }
    const work = executor.submit(claim, ABANDONED);
    const ending =
      ack === 'async'
        ? this.#keepAlive(work)
        : withTimeout(work, handlerTimeoutMs as number).then((settled) =>
            settled === TIMED_OUT ? HANDLER_TIMEOUT : endingOf(settled),
          );
    ending.then(
      (value) => this.#end(value),
      (error: unknown) => this.fail(error),
    );
  }

  async #keepAlive(work: Promise<unknown>): Promise<Ending> {
    const { keyed, options } = this;
    await keepAlive(keyed.request.waitUntil ?? options.waitUntil, work, keyed.context, options.report);
    return ACCEPTED;
  }

  /** A bug (every expected failure is an ending): passed on to the walk as a rejection. */
  fail(error: unknown): void {
    this.options.waiting.release(this.#slot, this.resolve);
    this.reject(error);
  }

  #end(ending: Ending): void {
    this.options.waiting.release(this.#slot, this.resolve);
    this.resolve(ending);
  }
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
