import type { DedupeStore } from '../stores/types.js';
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

/**
 * The one home of events' claims on a store: the store's calls, the leases kept alive while an event waits or
 * runs in this process, and what claiming (6-claim) and settling (8-settle) share.
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
}
