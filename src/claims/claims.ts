import type { ErrorContext } from '../contract/context.js';
import type { ClaimResult, DedupeStore, OpenClaim, OpenClaimResult } from '../stores/types.js';
import { ReplicasBehindError } from '../stores/unavailable.js';
import { Claim, type Handle } from './claim.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { Report } from './report.js';
import { StoreCalls } from './store-calls.js';

export interface ClaimsOptions<Tx> {
  store: DedupeStore<Tx>;
  leaseMs: number;
  retentionMs: number;
  /** How long any one call to the store may take before it counts as failed (503 store_unavailable). */
  storeTimeoutMs: number;
  report: Report;
}

/** How taking a claim went: held (the claim, which runs the handlers and settles), or why not. */
export type Taken<Tx> =
  | { status: 'claimed'; claim: Claim<Tx> }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'unavailable'; reason: 'store_unavailable' | 'not_replicated' };

/**
 * The one home of events' claims on a store, for a request's walk and a durable worker alike: the store's calls,
 * the leases kept alive while an event waits or runs in this process, and take(), where a claim's life starts.
 */
export class Claims<Tx> {
  readonly calls: StoreCalls<Tx>;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly report: Report;
  readonly leases: LeaseKeeper;

  constructor(options: ClaimsOptions<Tx>) {
    this.calls = new StoreCalls(options.store, options.storeTimeoutMs);
    this.leaseMs = options.leaseMs;
    this.retentionMs = options.retentionMs;
    this.report = options.report;
    this.leases = new LeaseKeeper(this.calls as StoreCalls<unknown>, options.leaseMs, options.report);
  }

  /**
   * Takes the claim of `key` for the length of a lease: held (its lease kept alive from now until it settles,
   * `handle` its handlers), or a duplicate, an event another run holds, or a store that failed in any way.
   * Never rejects.
   */
  async take(key: string, context: ErrorContext, handle: Handle<Tx>): Promise<Taken<Tx>> {
    let result: ClaimResult | OpenClaimResult<Tx>;
    try {
      result = this.calls.opensTransactions
        ? await this.calls.claimInTransaction(key, this.leaseMs)
        : await this.calls.claim(key, this.leaseMs);
    } catch (cause) {
      return this.#unavailable(cause, context);
    }
    if (result.status !== 'claimed') return result;
    const open = 'run' in result ? (result as unknown as OpenClaim<Tx>) : undefined;
    return { status: 'claimed', claim: new Claim(this, { key, token: result.token, context }, handle, open) };
  }

  async #unavailable(cause: unknown, context: ErrorContext): Promise<Taken<Tx>> {
    // A duplicate whose completion the replicas asked for (waitForReplicas) do not hold yet: processed, not held.
    if (cause instanceof ReplicasBehindError) {
      const message = 'An event was processed, but its completion is not on enough replicas yet.';
      await this.report('store_unavailable', message, cause, context);
      return NOT_REPLICATED;
    }
    await this.report('store_unavailable', 'The dedupe store failed to claim an event.', cause, context);
    return UNAVAILABLE;
  }
}

const UNAVAILABLE = { status: 'unavailable', reason: 'store_unavailable' } as const;
const NOT_REPLICATED = { status: 'unavailable', reason: 'not_replicated' } as const;
