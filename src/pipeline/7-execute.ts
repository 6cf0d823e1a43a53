import { type Awaitable, callUser, isThenable } from '../base/awaitable.js';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { TraceSpan } from '../contract/tracing.js';
import { StoreUnavailableError } from '../stores/unavailable.js';
import type { Claimed } from './6-claim.js';
import type { Ran, Settle, Settlement } from './8-settle.js';
import type { Executor, Job } from './executor.js';
import { withTransaction } from './handler-context.js';
import type { Report } from './report.js';
import { ACCEPTED, type Stop } from './stop.js';
import type { StoreCalls } from './store-calls.js';
import { traceHandlers } from './traced.js';

/** Runs an event's handlers: undefined when every one returned without a promise (nothing to wait for). */
export type Dispatch<Tx> = (
  event: { type: string; id?: string },
  ctx: Omit<HandlerContext<Tx>, 'attempt'>,
) => Promise<void> | undefined;

export interface ExecuteOptions<Tx> {
  executor: Executor;
  dispatch: Dispatch<Tx>;
  /** Synchronous acknowledgement waits for the settlement (up to `handlerTimeoutMs`); async answers 202 at once. */
  ack: 'sync' | 'async';
  handlerTimeoutMs?: number | undefined;
  /** The platform's hook that keeps async work alive after the answer, when the request brings none. */
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
  report: Report;
}

/**
 * The execute stage: the claimed event's handlers run on the executor, in the place reserved before claiming,
 * and their end settles the claim (8-settle). The request waits for the settlement, or with `ack: 'async'` is
 * answered 202 while the event runs on.
 */
export function execute<Tx>(
  claimed: Claimed,
  options: ExecuteOptions<Tx>,
  span?: TraceSpan,
): Awaitable<Settlement | Stop> {
  const { keyed } = claimed;
  const dispatch = (tx: Tx) => options.dispatch(keyed.event, withTransaction(keyed.handlerContext, tx));
  const run = new HandlerRun(claimed.settle, span ? traceHandlers(span, dispatch) : dispatch);
  const work = options.executor.submit(run, SHUT_DOWN);
  if (options.ack === 'async') {
    const waitUntil = keyed.request.waitUntil ?? options.waitUntil;
    return keepAlive(waitUntil, Promise.resolve(work), keyed.context, options.report).then(() => ACCEPTED);
  }
  const { handlerTimeoutMs } = options;
  // A run that finished within submit() is past any deadline's reach.
  if (!isThenable(work) || handlerTimeoutMs === undefined) return work;
  return withTimeout(Promise.resolve(work), handlerTimeoutMs).then(timedOut);
}

/** One claimed event's run on the executor: its handlers, then its settlement; or its release at shutdown. */
export class HandlerRun<Tx> implements Job<Settlement> {
  readonly calls: StoreCalls<Tx>;

  constructor(
    readonly settle: Settle,
    readonly handle: (tx: Tx) => Promise<void> | undefined,
  ) {
    this.calls = settle.claims.calls as StoreCalls<Tx>;
  }

  /** Settles at once, with no promise, when the handlers ran synchronously and the store answers at once. */
  run(): Awaitable<Settlement> {
    this.settle.running();
    if (this.calls.transactional) return this.#inTransaction().then((ran) => this.settle.ran(ran));
    const handled = callUser(() => this.handle(undefined as Tx));
    if (!isThenable(handled)) return this.settle.ran(NOT_COMMITTED);
    // One step from the handlers' end to the settlement: each further step is a turn of the microtask queue.
    return Promise.resolve(handled).then(
      () => this.settle.ran(NOT_COMMITTED),
      (error: unknown) => this.settle.ran(handlerFailed(error)),
    );
  }

  abandon(): Promise<unknown> {
    return this.settle.abandon();
  }

  /** Runs the handlers inside the store's transaction; a failure says whose it was. */
  async #inTransaction(): Promise<Ran> {
    let handlerError: unknown;
    const work = async (tx: Tx) => {
      try {
        await this.handle(tx);
      } catch (error) {
        handlerError = error ?? new Error('A handler rejected without a reason.');
        throw handlerError;
      }
    };
    const { key, token } = this.settle.held;
    try {
      await this.calls.transact(key, token, this.settle.claims.retentionMs, work);
      return COMMITTED;
    } catch (cause) {
      // A handler that met a lost connection or a failover failed because of the store.
      if (handlerError !== undefined && !(cause instanceof StoreUnavailableError)) {
        return { ok: false, reason: 'handler_failed', cause };
      }
      return { ok: false, reason: 'store_unavailable', cause };
    }
  }
}

const COMMITTED: Ran = { ok: true, committed: true };
const NOT_COMMITTED: Ran = { ok: true, committed: false };
const HANDLER_TIMEOUT: Stop = { stop: 'handler_timeout' };
const SHUT_DOWN: Stop = { stop: 'shutting_down' };

function handlerFailed(error: unknown): Ran {
  return {
    ok: false,
    reason: 'handler_failed',
    cause: error ?? new Error('A handler rejected without a reason.'),
  };
}

function timedOut(settled: Settlement | Stop | typeof TIMED_OUT): Settlement | Stop {
  return settled === TIMED_OUT ? HANDLER_TIMEOUT : settled;
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
