import PQueue from 'p-queue';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { Claim, Claims, Handle, Settlement, Taken } from '../claims/claim.js';
import type { Report } from '../claims/report.js';
import { Slots } from '../claims/store-calls.js';
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

export interface ExecutorOptions {
  /** Work running at once. */
  concurrency: number;
  /** Work waiting for a running slot; past it, reserve() refuses. */
  maxQueue: number;
}

/**
 * A piece of work the executor holds: `run` is called when a slot frees up (never after a cut-off), `abandon`
 * when close() gives up on it, queued or running. Exactly one of the two decides the answer.
 */
export interface Job<T> {
  run(): Promise<T>;
  abandon(): Promise<unknown>;
}

interface Entry<T, C> {
  readonly job: Job<T>;
  /** How the request is answered. */
  answer: (result: T | C | PromiseLike<T>) => void;
  /** What the request gets when close() gives up on the job. */
  readonly cutOff: C;
  /** Whether its answer was given: by its run finishing, or by a cut-off. */
  settled: boolean;
  /** Where the executor holds it until it is answered. */
  slot: number;
}

/**
 * Runs work on p-queue: `concurrency` at once, the rest waiting in order. It knows nothing of events or
 * stores. A place is reserved before the caller takes anything it would have to give back (a claim), so a full
 * queue turns work away while nothing is held yet. drain() refuses new reservations, waits for the reserved
 * places to be submitted or given up and for the queue to go idle; past its timeout the work still queued never
 * starts, and every job not finished is abandoned.
 */
export class Executor {
  readonly #queue: PQueue;
  readonly #room: number;
  #reserved = 0;
  #draining = false;
  #cutOff = false;
  #reservationsDone: (() => void) | undefined;
  readonly #entries = new Slots<Entry<unknown, unknown>>();

  constructor(options: ExecutorOptions) {
    this.#queue = new PQueue({ concurrency: options.concurrency });
    this.#room = options.concurrency + options.maxQueue;
  }

  get running(): number {
    return this.#queue.pending;
  }

  get waiting(): number {
    return this.#queue.size;
  }

  /** Takes a place for work about to be submitted; false when the room is full or the executor drains. */
  reserve(): boolean {
    if (this.#draining) return false;
    if (this.#queue.pending + this.#queue.size + this.#reserved >= this.#room) return false;
    this.#reserved++;
    return true;
  }

  /** The reserved place is not needed after all (nothing was claimed). */
  unreserve(): void {
    this.#reserved--;
    if (this.#reserved === 0) this.#reservationsDone?.();
  }

  /**
   * Submits a job in the place reserve() took. Resolves with its run's result, or `cutOff` once drain() gave up
   * on it; after a cut-off a job is abandoned at once and never runs. Rejects only when the run rejected.
   * The caller names its own cut-off answer, so that nothing stands between the run and the request.
   */
  submit<T, C>(job: Job<T>, cutOff: C): Promise<T | C> {
    if (this.#cutOff) {
      this.unreserve();
      return job.abandon().then((): C => cutOff);
    }
    return new Promise<T | C>((answer) => {
      const entry: Entry<T, C> = { job, answer, cutOff, settled: false, slot: 0 };
      entry.slot = this.#entries.add(entry as Entry<unknown, unknown>);
      // The queue's own promise is not awaited: a cut-off clears the queue, and the entry answers instead.
      this.#queue.add((): Promise<void> => this.#run(entry));
      this.unreserve();
    });
  }

  #run<T, C>(entry: Entry<T, C>): Promise<void> {
    return entry.job.run().then(
      (result) => this.#answer(entry, result),
      // A job's run settles every expected failure itself; a rejection is a bug, passed on to the caller.
      (error: unknown) => this.#answer(entry, Promise.reject(error)),
    );
  }

  #answer<T, C>(entry: Entry<T, C>, result: T | PromiseLike<T>): void {
    if (!entry.settled) entry.answer(result);
    entry.settled = true;
    this.#entries.remove(entry.slot, entry as Entry<unknown, unknown>);
  }

  /**
   * Resolves once every reserved place was submitted or given up and the queue is idle. With `timeoutMs`, gives
   * up after it: queued work never starts, every job not finished is abandoned (its answer is its cut-off), and it
   * resolves once each abandoned job handed back what it held. New reservations are refused from the start.
   */
  async drain(timeoutMs: number | undefined): Promise<void> {
    this.#draining = true;
    const idle = this.#idle();
    if (timeoutMs === undefined) return idle;
    if ((await withTimeout(idle, timeoutMs)) !== TIMED_OUT) return;
    this.#cutOff = true;
    this.#queue.clear();
    const handedBack: Promise<unknown>[] = [];
    for (const entry of this.#entries.items()) {
      entry.settled = true;
      entry.answer(entry.cutOff);
      this.#entries.remove(entry.slot, entry);
      handedBack.push(entry.job.abandon());
    }
    await Promise.all(handedBack);
  }

  async #idle(): Promise<void> {
    if (this.#reserved > 0) {
      await new Promise<void>((resolve) => {
        this.#reservationsDone = resolve;
      });
    }
    await this.#queue.onIdle();
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
