import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { StoreTimeoutError } from '../stores/deadline.js';
import type { ClaimResult, DedupeStore, OpenClaimResult } from '../stores/types.js';

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

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const claiming = checkedClaim(this.store, key, leaseMs);
    try {
      return await this.#within('claim', claiming);
    } catch (error) {
      // A claim that lands after its deadline holds a lease nobody will settle: hand it back.
      if (error instanceof StoreTimeoutError) void this.#releaseLate(key, claiming);
      throw error;
    }
  }

  /** The claim inside the store's transaction (see opensTransactions), bounded like claim(). */
  async claimInTransaction(key: string, leaseMs: number): Promise<OpenClaimResult<Tx>> {
    const claiming = checkedOpenClaim(this.store, key, leaseMs);
    try {
      return await this.#within('claim', claiming);
    } catch (error) {
      // A claim that lands after its deadline holds a transaction nobody will run: roll it back.
      if (error instanceof StoreTimeoutError) void abandonLate(claiming);
      throw error;
    }
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#settle('complete', () => this.store.complete(key, token, retentionMs));
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

  #settle(method: 'complete' | 'renew' | 'release', call: () => PromiseLike<boolean> | boolean) {
    return this.#within(method, checkedOwned(method, call));
  }

  #within<T>(method: string, work: Promise<T>): Promise<T> {
    return withTimeout(work, this.timeoutMs).then((settled) => {
      if (settled !== TIMED_OUT) return settled;
      throw new StoreTimeoutError(
        `The dedupe store did not answer ${method}() within ${this.timeoutMs} ms (storeTimeoutMs): the event ` +
          'is answered 503 so the service retries it. Check that the store is reachable, or that a custom ' +
          "store's promise always settles.",
      );
    });
  }

  async #releaseLate(key: string, claiming: Promise<ClaimResult>): Promise<void> {
    try {
      const late = await claiming;
      if (late.status === 'claimed') await this.store.release(key, late.token);
    } catch {
      // Nothing to hand back, or the store is still failing: the lease then ends by itself.
    }
  }
}

/** The store's claim, awaited as `await` takes any answer (a throw, a thenable, a plain value), then checked. */
async function checkedClaim<Tx>(store: DedupeStore<Tx>, key: string, leaseMs: number): Promise<ClaimResult> {
  return checkClaim(await store.claim(key, leaseMs));
}

async function abandonLate<Tx>(claiming: Promise<OpenClaimResult<Tx>>): Promise<void> {
  try {
    const late = await claiming;
    if (late.status === 'claimed') await late.abandon();
  } catch {
    // The claim failed after all: nothing to roll back.
  }
}

async function checkedOpenClaim<Tx>(
  store: DedupeStore<Tx>,
  key: string,
  leaseMs: number,
): Promise<OpenClaimResult<Tx>> {
  const claimInTransaction = store.claimInTransaction as NonNullable<DedupeStore<Tx>['claimInTransaction']>;
  const result = checkClaim(await claimInTransaction.call(store, key, leaseMs)) as OpenClaimResult<Tx>;
  if (
    result.status === 'claimed' &&
    (typeof result.run !== 'function' || typeof result.abandon !== 'function')
  )
    throw new StoreContractError(
      `The dedupe store's claimInTransaction() resolved a claim without run() and abandon().`,
    );
  return result;
}

async function checkedOwned(method: string, call: () => PromiseLike<boolean> | boolean): Promise<boolean> {
  return checkOwned(method, await call());
}

const CLAIM_SHAPE =
  "claim() must resolve { status: 'claimed', token: string }, { status: 'duplicate' } or " +
  "{ status: 'in_flight', retryAfterMs: number } (see DedupeStore in messaging-webhooks).";

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
