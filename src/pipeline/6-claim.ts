import type { ErrorContext } from '../receiver/handlers.js';
import type { ClaimResult, DedupeStore } from '../stores/types.js';
import { StoreUnavailableError } from '../stores/unavailable.js';
import type { Keyed } from './5-dedupe-key.js';
import type { Job, Runnable } from './7-execute.js';
import { type Ran, Settle, type Settlement } from './8-settle.js';
import { type ImmediateStore, immediate } from './immediate-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { Report } from './report.js';
import { DUPLICATE, type Stop } from './stop.js';

/** An event this request holds the claim of, ready to run on the executor: what the execute stage needs. */
export interface Claimed<Tx> extends Runnable {
  readonly claim: Claim<Tx>;
}

export type ClaimAttempt<Tx> =
  | { status: 'claimed'; claim: Claim<Tx> }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'unavailable' };

export interface ClaimsOptions<Tx> {
  store: DedupeStore<Tx>;
  leaseMs: number;
  retentionMs: number;
  report: Report;
}

/**
 * The claim stage: holds the event under its key while its handlers run (`handle`), or stops the walk: a
 * duplicate, an event another delivery holds (retry once its lease may have ended), or no store.
 */
export function claim<Tx>(
  keyed: Keyed,
  claims: Claims<Tx>,
  handle: (tx: Tx) => Promise<void> | undefined,
): Claimed<Tx> | Stop | Promise<Claimed<Tx> | Stop> {
  const attempt = claims.take(keyed.key, handle, keyed.context);
  if (attempt instanceof Promise) return attempt.then((taken) => claimed(keyed, taken));
  return claimed(keyed, attempt);
}

function claimed<Tx>(keyed: Keyed, attempt: ClaimAttempt<Tx>): Claimed<Tx> | Stop {
  switch (attempt.status) {
    case 'claimed':
      return { claim: attempt.claim, request: keyed.request, context: keyed.context };
    case 'duplicate':
      return DUPLICATE;
    case 'unavailable':
      return { stop: 'store_unavailable' };
    case 'in_flight':
      return {
        stop: 'event_in_progress',
        retryAfterSeconds: Math.max(1, Math.ceil(attempt.retryAfterMs / 1000)),
      };
  }
}

/**
 * The one home of events' claims on a store: the claim, its lease kept alive while the event waits or runs in
 * this process, and (8-settle) exactly one settlement.
 */
export class Claims<Tx> {
  readonly store: DedupeStore<Tx>;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly report: Report;
  readonly leases: LeaseKeeper;
  readonly immediate: ImmediateStore | undefined;

  constructor(options: ClaimsOptions<Tx>) {
    this.store = options.store;
    this.leaseMs = options.leaseMs;
    this.retentionMs = options.retentionMs;
    this.report = options.report;
    this.leases = new LeaseKeeper(options.store, options.leaseMs, options.report);
    this.immediate = immediate(options.store as DedupeStore<unknown>);
  }

  /**
   * Claims the event under `key`. `handle` runs its handlers (with the transaction's client when the store is
   * transactional) once the returned claim is run. Synchronous for a store that answers at once.
   */
  take(
    key: string,
    handle: (tx: Tx) => Promise<void> | undefined,
    context: ErrorContext,
  ): ClaimAttempt<Tx> | Promise<ClaimAttempt<Tx>> {
    if (this.immediate) {
      try {
        return this.#attempt(this.immediate.claimSync(key, this.leaseMs), key, handle, context);
      } catch (cause) {
        return this.#unavailable(cause, context);
      }
    }
    return this.store.claim(key, this.leaseMs).then(
      (result) => this.#attempt(result, key, handle, context),
      (cause) => this.#unavailable(cause, context),
    );
  }

  #attempt(
    result: ClaimResult,
    key: string,
    handle: (tx: Tx) => Promise<void> | undefined,
    context: ErrorContext,
  ): ClaimAttempt<Tx> {
    if (result.status !== 'claimed') return result;
    return { status: 'claimed', claim: new Claim(this, key, result.token, handle, context) };
  }

  async #unavailable(cause: unknown, context: ErrorContext): Promise<ClaimAttempt<Tx>> {
    await this.report('store_unavailable', 'The dedupe store failed to claim an event.', cause, context);
    return { status: 'unavailable' };
  }
}

/** One claimed event, run by the executor: its handlers run in the claim, then it settles (8-settle). */
export class Claim<Tx> implements Job<Settlement> {
  readonly #settle: Settle;

  constructor(
    readonly claims: Claims<Tx>,
    readonly key: string,
    readonly token: string,
    readonly handle: (tx: Tx) => Promise<void> | undefined,
    readonly context: ErrorContext,
  ) {
    this.#settle = new Settle(claims, this);
  }

  /** Settles at once, with no promise, when the handlers ran synchronously and the store answers at once. */
  run(): Settlement | Promise<Settlement> {
    this.#settle.running();
    const settle = (ran: Ran) => this.#settle.ran(ran);
    const { store } = this.claims;
    if (store.transact) return this.#dispatchInTransaction(store.transact.bind(store)).then(settle);
    let handled: Promise<void> | undefined;
    try {
      handled = this.handle(undefined as Tx);
    } catch (error) {
      return settle(handlerFailed(error));
    }
    if (handled === undefined) return settle(NOT_COMMITTED);
    // One step from the handlers' end to the settlement: each further step is a turn of the microtask queue.
    return handled.then(
      () => settle(NOT_COMMITTED),
      (error) => settle(handlerFailed(error)),
    );
  }

  abandon(): Promise<unknown> {
    return this.#settle.abandon();
  }

  /** Runs the handlers inside the store's transaction; a failure says whose it was. */
  async #dispatchInTransaction(transact: NonNullable<DedupeStore<Tx>['transact']>): Promise<Ran> {
    let handlerError: unknown;
    const dispatch = async (tx: Tx) => {
      try {
        await this.handle(tx);
      } catch (error) {
        handlerError = error ?? new Error('A handler rejected without a reason.');
        throw handlerError;
      }
    };
    try {
      await transact(this.key, this.token, this.claims.retentionMs, dispatch);
      return COMMITTED;
    } catch (cause) {
      // A handler that met a lost connection or a failover failed because of the store.
      if (handlerError !== undefined && !(cause instanceof StoreUnavailableError))
        return { ok: false, reason: 'handler_failed', cause };
      return { ok: false, reason: 'store_unavailable', cause };
    }
  }
}

const COMMITTED: Ran = { ok: true, committed: true };
const NOT_COMMITTED: Ran = { ok: true, committed: false };

function handlerFailed(error: unknown): Ran {
  return {
    ok: false,
    reason: 'handler_failed',
    cause: error ?? new Error('A handler rejected without a reason.'),
  };
}
