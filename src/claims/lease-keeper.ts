import { type Poller, startPoller } from '../base/poller.js';
import { Slots } from '../base/slots.js';
import type { ErrorContext } from '../contract/context.js';
import type { Report } from './report.js';
import type { StoreCalls } from './store-calls.js';

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
