import type { ErrorContext } from '../receiver/handlers.js';
import type { DedupeStore } from '../stores/types.js';
import type { Report } from './report.js';

interface Held {
  readonly key: string;
  readonly token: string;
  readonly context: ErrorContext;
}

/** While a renewal is on its way, the lease is not due again. */
const RENEWING = Number.POSITIVE_INFINITY;

/**
 * Keeps the leases of events that wait or run in this process alive, so that only a dead process lets a claim
 * expire: time in the queue and slow handlers never hand an event to a second delivery.
 *
 * One timer serves every lease, ticking at a quarter of the lease while any is held. A lease is renewed once
 * half of it has run, so an event that settles sooner costs no round trip; the timer stops at the first tick
 * that finds nothing held and does not keep the process alive.
 */
export class LeaseKeeper {
  /** Each held claim, and when its lease has run half its length: from then on a tick renews it. */
  readonly #held = new Map<Held, number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly store: DedupeStore<unknown>,
    readonly leaseMs: number,
    readonly report: Report,
  ) {}

  /** Starts keeping a claim's lease, taken just now. A store written without `renew` cannot extend it. */
  keep(claim: Held): void {
    if (typeof this.store.renew !== 'function') return;
    this.#held.set(claim, Date.now() + this.leaseMs / 2);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), Math.max(1, Math.floor(this.leaseMs / 4)));
      this.#timer.unref?.();
    }
  }

  drop(claim: Held): void {
    this.#held.delete(claim);
  }

  get size(): number {
    return this.#held.size;
  }

  #tick(): void {
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    for (const [claim, renewAt] of this.#held) {
      if (renewAt > now) continue;
      this.#held.set(claim, RENEWING);
      void this.#renew(claim, renewAt);
    }
  }

  async #renew(claim: Held, dueAt: number): Promise<void> {
    // Settled meanwhile (dropped): nothing is held any more, and nothing is put back.
    const stillHeld = (renewAt: number) => {
      if (this.#held.has(claim)) this.#held.set(claim, renewAt);
    };
    try {
      const owned = await this.store.renew(claim.key, claim.token, this.leaseMs);
      if (owned) {
        stillHeld(Date.now() + this.leaseMs / 2);
      } else if (this.#held.delete(claim)) {
        await this.report(
          'lease_lost',
          `The claim of ${claim.context.eventType} expired before its lease could be renewed (was this process stalled?); another delivery may run it.`,
          undefined,
          claim.context,
        );
      }
    } catch (cause) {
      // The next tick tries again; the lease still has at least a quarter of its length to run.
      stillHeld(dueAt);
      await this.report(
        'store_unavailable',
        'The dedupe store failed to renew the lease of an event still running.',
        cause,
        claim.context,
      );
    }
  }
}
