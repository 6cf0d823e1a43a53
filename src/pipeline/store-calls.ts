import { type Awaitable, andThen, callUser, isThenable } from '../base/awaitable.js';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { StoreTimeoutError } from '../stores/deadline.js';
import { immediateOf } from '../stores/memory.js';
import type { ClaimResult, DedupeStore } from '../stores/types.js';

/** What a store call fails with when the store broke its contract: the receiver answers 503 store_unavailable. */
export class StoreContractError extends Error {
  override name = 'StoreContractError';
}

/**
 * Every call the receiver makes to its dedupe store, in one shape whatever the store is: a store may be written
 * by anyone, so it may throw instead of rejecting, answer with any thenable or a plain value, resolve something
 * that is not a result, or never answer. Here each of those becomes a rejection with an error that names what
 * the store did, within `timeoutMs`. The in-memory store, unchanged by a subclass, answers at once.
 */
export class StoreCalls<Tx> {
  readonly #immediate: ReturnType<typeof immediateOf>;

  constructor(
    readonly store: DedupeStore<Tx>,
    readonly timeoutMs: number,
  ) {
    this.#immediate = immediateOf(store as DedupeStore<unknown>);
  }

  claim(key: string, leaseMs: number): Awaitable<ClaimResult> {
    if (this.#immediate) return callUser(() => this.#immediate?.claimSync(key, leaseMs) as ClaimResult);
    // The check runs inside callUser too: a plain answer that is no result rejects like any other failure.
    const checked = callUser(() =>
      andThen(
        callUser(() => this.store.claim(key, leaseMs)),
        checkClaim,
      ),
    );
    if (!isThenable(checked)) return checked;
    return this.#within('claim', checked).catch((error: unknown) => {
      // A claim that lands after its deadline holds a lease nobody will settle: hand it back.
      if (error instanceof StoreTimeoutError) void this.#releaseLate(key, checked);
      throw error;
    });
  }

  complete(key: string, token: string, retentionMs: number): Awaitable<boolean> {
    if (this.#immediate)
      return callUser(() => this.#immediate?.completeSync(key, token, retentionMs) === true);
    return this.#settle('complete', () => this.store.complete(key, token, retentionMs));
  }

  renew(key: string, token: string, leaseMs: number): Awaitable<boolean> {
    return this.#settle('renew', () => this.store.renew(key, token, leaseMs));
  }

  release(key: string, token: string): Awaitable<boolean> {
    return this.#settle('release', () => this.store.release(key, token));
  }

  /** The store's transaction around the handlers: no deadline of its own (the handlers' run is bounded). */
  transact(key: string, token: string, retentionMs: number, work: (tx: Tx) => Promise<void>): Promise<void> {
    const transact = this.store.transact as NonNullable<DedupeStore<Tx>['transact']>;
    return Promise.resolve(callUser(() => transact.call(this.store, key, token, retentionMs, work))).then(
      noop,
    );
  }

  get transactional(): boolean {
    return typeof this.store.transact === 'function';
  }

  #settle(method: 'complete' | 'renew' | 'release', call: () => Awaitable<boolean>): Awaitable<boolean> {
    const checked = callUser(() => andThen(callUser(call), (owned) => checkOwned(method, owned)));
    return isThenable(checked) ? this.#within(method, checked) : checked;
  }

  #within<T>(method: string, work: PromiseLike<T>): Promise<T> {
    return withTimeout(Promise.resolve(work), this.timeoutMs).then((settled) => {
      if (settled !== TIMED_OUT) return settled;
      throw new StoreTimeoutError(
        `The dedupe store did not answer ${method}() within ${this.timeoutMs} ms (storeTimeoutMs): the event ` +
          'is answered 503 so the service retries it. Check that the store is reachable, or that a custom ' +
          "store's promise always settles.",
      );
    });
  }

  async #releaseLate(key: string, claiming: PromiseLike<ClaimResult>): Promise<void> {
    try {
      const late = await claiming;
      if (late.status === 'claimed') await this.store.release(key, late.token);
    } catch {
      // Nothing to hand back, or the store is still failing: the lease then ends by itself.
    }
  }
}

const CLAIM_SHAPE =
  "claim() must resolve { status: 'claimed', token: string }, { status: 'duplicate' } or " +
  "{ status: 'in_flight', retryAfterMs: number } (see DedupeStore in messaging-webhooks/adapter).";

function checkClaim(result: ClaimResult): ClaimResult {
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

function noop(): void {}
