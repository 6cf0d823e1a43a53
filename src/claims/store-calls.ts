import { type Answer, type Awaitable, callUser, withinTurnOrDeadline } from '../base/deadline.js';
import { Slots } from '../base/executor.js';
import { type Poller, startPoller } from '../base/poller.js';
import type { ErrorContext } from '../contract/context.js';
import { StoreTimeoutError } from '../stores/deadline.js';
import type { ClaimResult, DedupeStore } from '../stores/types.js';
import type { Report } from './report.js';

// What a claim holds on the store: every call to it in one shape and within a deadline (StoreCalls), the
// renewals that keep a held claim's lease alive (LeaseKeeper), each lease in a slot of its own (Slots, in
// base/executor.ts, which the executor holds its work in too).

/** What a store call fails with when the store broke its contract: the receiver answers 503 store_unavailable. */
export class StoreContractError extends Error {
  override name = 'StoreContractError';
}

/**
 * Every call a claim makes to its dedupe store, in one shape whatever the store is: a store may be written by
 * anyone, so it may throw instead of rejecting, answer with any thenable or a plain value, resolve something
 * that is not a result, or never answer. Here each of those becomes a rejection with an error that names what
 * the store did, within `timeoutMs`.
 */
export class StoreCalls<Tx> {
  constructor(
    readonly store: DedupeStore<Tx>,
    readonly timeoutMs: number,
  ) {}

  /**
   * The store's claim, checked; `answer` (the result) or `failed` (any failure) answers in the same reaction,
   * through `to` when it is given (then no promise is made).
   */
  claim<T>(
    key: string,
    leaseMs: number,
    answer: (result: ClaimResult) => Awaitable<T>,
    failed: Failed<T>,
    to?: Answer<T>,
  ) {
    const claiming = answerOf(() => this.store.claim(key, leaseMs));
    const check = (result: ClaimResult) => answer(checkClaim(result));
    // A claim that lands after its deadline holds a lease nobody will settle: hand it back.
    return this.within('claim', claiming, check, () => void this.#releaseLate(key, claiming), failed, to);
  }

  /** The store's completion of a held claim, checked; `answer`, `failed` and `to` as for claim. */
  complete<T>(
    held: Held,
    retentionMs: number,
    answer: (owned: boolean) => Awaitable<T>,
    failed: Failed<T>,
    to?: Answer<T>,
  ) {
    const completing = answerOf(() => this.store.complete(held.key, held.token, retentionMs));
    const check = (owned: boolean) => answer(checkOwned('complete', owned));
    return this.within('complete', completing, check, undefined, failed, to);
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#settle('renew', () => this.store.renew(key, token, leaseMs));
  }

  release(key: string, token: string): Promise<boolean> {
    return this.#settle('release', () => this.store.release(key, token));
  }

  /** The store's transaction around the handlers: no deadline of its own (the handlers' run is bounded). */
  async transact(key: string, token: string, retentionMs: number, work: (tx: Tx) => Promise<void>) {
    const transact = this.store.transact as NonNullable<DedupeStore<Tx>['transact']>;
    await transact.call(this.store, key, token, retentionMs, work);
  }

  get transactional(): boolean {
    return typeof this.store.transact === 'function';
  }

  /** Whether the store claims inside the transaction the handlers run in (read per claim: it may drop it). */
  get opensTransactions(): boolean {
    return this.transactional && typeof this.store.claimInTransaction === 'function';
  }

  #settle(method: 'renew' | 'release', call: () => Awaitable<boolean>): Promise<boolean> {
    return this.within(method, answerOf(call), (owned) => checkOwned(method, owned));
  }

  /**
   * What the store answered to `work`, checked (`check` throws when it is no answer), within the deadline; `late`
   * runs once the deadline passed first; `failed`, when given, answers any failure instead of a rejection; with
   * `to`, answered through it and no promise is made.
   */
  within<S, T>(
    method: string,
    work: Promise<S>,
    check: (answer: S) => Awaitable<T>,
    late?: () => void,
    failed?: Failed<T>,
  ): Promise<T>;
  within<S, T>(
    method: string,
    work: Promise<S>,
    check: (answer: S) => Awaitable<T>,
    late: (() => void) | undefined,
    failed: Failed<T>,
    to: Answer<T> | undefined,
  ): Promise<T> | undefined;
  within<S, T>(
    method: string,
    work: Promise<S>,
    check: (answer: S) => Awaitable<T>,
    late?: () => void,
    failed?: Failed<T>,
    to?: Answer<T>,
  ): Promise<T> | undefined {
    return withinTurnOrDeadline(work, this.timeoutMs, this.#timedOut(method, late), check, failed, to);
  }

  /** The error of a store call past its deadline, after `late` ran. */
  #timedOut(method: string, late: (() => void) | undefined): () => Error {
    return () => {
      late?.();
      return new StoreTimeoutError(
        `The dedupe store did not answer ${method}() within ${this.timeoutMs} ms (storeTimeoutMs): the event ` +
          'is answered 503 so the service retries it. Check that the store is reachable, or that a custom ' +
          "store's promise always settles.",
      );
    };
  }

  async #releaseLate(key: string, claiming: Promise<ClaimResult>): Promise<void> {
    try {
      const late = checkClaim(await claiming);
      if (late.status === 'claimed') await this.store.release(key, late.token);
    } catch {
      // Nothing to hand back, or the store is still failing: the lease then ends by itself.
    }
  }
}

/** How a caller answers a store call's failure in the call's own reaction. */
export type Failed<T> = (cause: unknown) => Awaitable<T>;

/**
 * A store call's answer as a native promise, whatever the store did (threw, answered a thenable or a plain
 * value), as `await` would take it; a native promise passes through as it is.
 */
export function answerOf<T>(call: () => Awaitable<T>): Promise<T> {
  return Promise.resolve(callUser(call));
}

const CLAIM_SHAPE =
  "claim() must resolve { status: 'claimed', token: string }, { status: 'duplicate' } or " +
  "{ status: 'in_flight', retryAfterMs: number } (see DedupeStore in messaging-webhooks).";

export function checkClaim(result: ClaimResult): ClaimResult {
  const status = (result as { status?: unknown } | null | undefined)?.status;
  if (status === 'claimed' && typeof (result as { token?: unknown }).token === 'string') return result;
  if (status === 'duplicate') return result;
  if (status === 'in_flight') {
    const retryAfterMs = (result as { retryAfterMs?: unknown }).retryAfterMs;
    if (typeof retryAfterMs === 'number' && retryAfterMs >= 0) return result;
  }
  throw new StoreContractError(`The dedupe store's claim() resolved ${shapeOf(result)}: ${CLAIM_SHAPE}`);
}

function checkOwned(method: string, owned: boolean): boolean {
  if (typeof owned === 'boolean') return owned;
  throw new StoreContractError(
    `The dedupe store's ${method}() resolved ${shapeOf(owned)}: ${method}() must resolve true or false (see DedupeStore).`,
  );
}

/** What a store answered, named without its content beyond a status (a store's values are the user's data). */
function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  const status = (value as { status?: unknown }).status;
  return typeof status === 'string'
    ? `{ status: ${JSON.stringify(status.slice(0, 40))}, … }`
    : 'an object with no known status';
}

/** The claim being held: its key, the token that proves it holds it, and what onError is told of it. */
export interface Held {
  readonly key: string;
  readonly token: string;
  readonly context: ErrorContext;
}

/** While a renewal is on its way, the lease is not due again. */
const RENEWING = Number.POSITIVE_INFINITY;

/** A claim whose lease is kept alive, and when its lease has run half its length: from then on a tick renews it. */
export interface KeptLease {
  readonly claim: Held;
  renewAt: number;
  slot: number;
}

/**
 * Keeps the leases of events that wait or run in this process alive, so that only a dead process lets a claim
 * expire: time in the queue and slow handlers never hand an event to a second delivery.
 *
 * One timer serves every lease, ticking at a quarter of the lease while any is held. A lease is renewed once
 * half of it has run, so an event that settles sooner costs no round trip; the timer stops at the first tick
 * that finds nothing held and does not keep the process alive. Each lease is held in a slot of its own, not as
 * the key of a Map: see Slots.
 */
export class LeaseKeeper {
  readonly #held = new Slots<KeptLease>();
  #poller: Poller | undefined;

  constructor(
    readonly calls: StoreCalls<unknown>,
    readonly leaseMs: number,
    readonly report: Report,
  ) {}

  /**
   * Starts keeping a claim's lease, taken just now; what it returns stops it (drop). A store written without
   * `renew` cannot extend it: undefined.
   */
  keep(claim: Held): KeptLease | undefined {
    if (typeof this.calls.store.renew !== 'function') return undefined;
    const lease: KeptLease = { claim, renewAt: Date.now() + this.leaseMs / 2, slot: 0 };
    lease.slot = this.#held.add(lease);
    this.#poller ??= startPoller(() => this.#tick(), Math.max(1, Math.floor(this.leaseMs / 4)));
    return lease;
  }

  drop(lease: KeptLease | undefined): void {
    if (lease) this.#held.remove(lease.slot, lease);
  }

  get size(): number {
    return this.#held.size;
  }

  #tick(): void {
    if (this.#held.size === 0) {
      this.#poller?.stop();
      this.#poller = undefined;
      return;
    }
    const now = Date.now();
    for (const lease of this.#held.items()) {
      if (lease.renewAt > now) continue;
      const dueAt = lease.renewAt;
      lease.renewAt = RENEWING;
      void this.#renew(lease, dueAt);
    }
  }

  async #renew(lease: KeptLease, dueAt: number): Promise<void> {
    const { claim } = lease;
    try {
      const owned = await this.calls.renew(claim.key, claim.token, this.leaseMs);
      // Settled meanwhile (dropped): nothing is held any more, and nothing is put back.
      if (!this.#held.holds(lease.slot, lease)) return;
      if (owned) {
        lease.renewAt = Date.now() + this.leaseMs / 2;
        return;
      }
      this.#held.remove(lease.slot, lease);
      await this.report(
        'lease_lost',
        `The claim of ${claim.context.eventType} expired before its lease could be renewed (was this process stalled?); another delivery may run it.`,
        undefined,
        claim.context,
      );
    } catch (cause) {
      // The next tick tries again; the lease still has at least a quarter of its length to run.
      if (this.#held.holds(lease.slot, lease)) lease.renewAt = dueAt;
      await this.report(
        'store_unavailable',
        'The dedupe store failed to renew the lease of an event still running.',
        cause,
        claim.context,
      );
    }
  }
}
