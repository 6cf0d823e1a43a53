import { option, rules } from '../base/options.js';
import type { ClaimResult, DedupeStore } from './types.js';

export interface MemoryDedupeStoreOptions {
  /**
   * Most keys kept (in flight + completed). Past it expired keys go first, then the oldest completed ones;
   * a claim in flight is never evicted. Default 100,000.
   */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

// Every answer of complete, renew and release is one of two settled promises, made once: a promise is never
// changed by being read, so each call need not make its own.
const OWNED: Promise<boolean> = Promise.resolve(true);
const NOT_OWNED: Promise<boolean> = Promise.resolve(false);

interface Lease {
  token: string;
  expiresAt: number;
}

/**
 * The embedded default store: one process, bounded memory. For several instances use the Redis or
 * PostgreSQL store: a memory store cannot see claims made by another process.
 *
 * Completed keys cost one Map entry each: the value is the expiry in whole seconds since the store was
 * created, a small integer that V8 keeps unboxed in the entry itself.
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly maxEntries: number;
  readonly #now: () => number;
  readonly #epoch: number;
  readonly #leases = new Map<string, Lease>();
  /** key → expiry (seconds since #epoch), in insertion order: the oldest completion is first. */
  readonly #completed = new Map<string, number>();
  /** Latest expiry inserted; an entry below it was completed with a shorter retention, out of order. */
  #latestExpiry = 0;
  /**
   * No out-of-order entry expires before this (a sweep may set it earlier: the earliest of all survivors), so
   * until then no expired entry hides behind the first one and eviction needs no full pass.
   */
  #earliestStray = Number.POSITIVE_INFINITY;
  #nextToken = 0;
  /**
   * No lease expires before this time (a lower bound: renewals only move expiries later), so a full store
   * looks for expired leases only once one may have expired, not on every claim.
   */
  #leasesExpireFrom = Number.POSITIVE_INFINITY;
  /**
   * Eviction walks the completions with one live iterator instead of starting a new one each time: a Map keeps
   * the holes of deleted entries until it rehashes, so a fresh iterator at the front would skip every
   * completion evicted so far, on every claim (tens of microseconds once the store is full).
   */
  #cursor: Iterator<string> | undefined;
  /** The oldest completion the cursor has reached and not evicted yet. */
  #oldest: string | undefined;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.maxEntries = option(
      'maxEntries',
      options.maxEntries,
      100_000,
      rules.whole({ min: 1 }),
      'new MemoryDedupeStore({ maxEntries }): ',
    );
    this.#now = options.now ?? Date.now;
    this.#epoch = this.#now();
  }

  get size(): number {
    return this.#leases.size + this.#completed.size;
  }

  claim(key: string, leaseMs: number): Promise<ClaimResult> {
    try {
      return Promise.resolve(this.claimSync(key, leaseMs));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.completeSync(key, token, retentionMs) ? OWNED : NOT_OWNED;
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const lease = this.#leases.get(key);
    // An expired lease nobody took over is still ours (as for complete): renewing it keeps it ours.
    if (lease?.token !== token) return NOT_OWNED;
    lease.expiresAt = this.#now() + leaseMs;
    return OWNED;
  }

  release(key: string, token: string): Promise<boolean> {
    if (this.#leases.get(key)?.token !== token) return NOT_OWNED;
    this.#leases.delete(key);
    return OWNED;
  }

  /** Throws when every entry is a live lease: evicting one would let its event run twice at once. */
  claimSync(key: string, leaseMs: number): ClaimResult {
    const now = this.#now();
    const expiry = this.#completed.get(key);
    if (expiry !== undefined) {
      if (this.#epoch + expiry * 1000 > now) return { status: 'duplicate' };
      this.#forget(key);
    }
    const lease = this.#leases.get(key);
    if (lease && lease.expiresAt > now) return { status: 'in_flight', retryAfterMs: lease.expiresAt - now };
    if (!lease) this.#makeRoom(now);
    const token = String(++this.#nextToken);
    const expiresAt = now + leaseMs;
    this.#leases.set(key, { token, expiresAt });
    if (expiresAt < this.#leasesExpireFrom) this.#leasesExpireFrom = expiresAt;
    return { status: 'claimed', token };
  }

  completeSync(key: string, token: string, retentionMs: number): boolean {
    // A lease that expired but was not taken over is still ours: the work did succeed.
    if (this.#leases.get(key)?.token !== token) return false;
    this.#leases.delete(key);
    const expiry = Math.ceil((this.#now() + retentionMs - this.#epoch) / 1000);
    if (expiry >= this.#latestExpiry) this.#latestExpiry = expiry;
    else if (expiry < this.#earliestStray) this.#earliestStray = expiry;
    this.#completed.set(key, expiry);
    return true;
  }

  /** Drops everything; for tests. */
  clear(): void {
    this.#leases.clear();
    this.#completed.clear();
    this.#cursor = undefined;
    this.#oldest = undefined;
    this.#latestExpiry = 0;
    this.#earliestStray = Number.POSITIVE_INFINITY;
    this.#leasesExpireFrom = Number.POSITIVE_INFINITY;
  }

  /** Expired entries go first, then the oldest completions; live leases never. */
  #makeRoom(now: number): void {
    if (this.size < this.maxEntries) return;
    const nowSeconds = (now - this.#epoch) / 1000;
    // With one retention for all keys, insertion order is expiry order: the expired ones are in front.
    for (let key = this.#peekOldest(); key !== undefined; key = this.#peekOldest()) {
      if ((this.#completed.get(key) as number) > nowSeconds) break;
      this.#forget(key);
    }
    if (this.size >= this.maxEntries && this.#earliestStray <= nowSeconds) this.#sweep(nowSeconds);
    if (this.size >= this.maxEntries && this.#leasesExpireFrom <= now) this.#dropExpiredLeases(now);
    for (let key = this.#peekOldest(); key !== undefined; key = this.#peekOldest()) {
      if (this.size < this.maxEntries) return;
      this.#forget(key);
    }
    if (this.size >= this.maxEntries) {
      throw new Error(
        `MemoryDedupeStore is full: all ${this.maxEntries} entries are events being processed right now. ` +
          'Raise maxEntries above concurrency + maxQueue of the receiver.',
      );
    }
  }

  #dropExpiredLeases(now: number): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const [key, lease] of this.#leases) {
      if (lease.expiresAt <= now) this.#leases.delete(key);
      else if (lease.expiresAt < earliest) earliest = lease.expiresAt;
    }
    this.#leasesExpireFrom = earliest;
  }

  /** A full pass, only when an entry completed with a shorter retention expired behind the first one. */
  #sweep(nowSeconds: number): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const [key, expiry] of this.#completed) {
      if (expiry <= nowSeconds) this.#forget(key);
      else if (expiry < earliest) earliest = expiry;
    }
    this.#earliestStray = earliest;
  }

  #peekOldest(): string | undefined {
    if (this.#oldest !== undefined) return this.#oldest;
    if (this.#completed.size === 0) return undefined;
    let next = this.#cursor?.next();
    if (next === undefined || next.done) {
      // Reached the end (everything before was evicted): start over on what was completed since.
      this.#cursor = this.#completed.keys();
      next = this.#cursor.next();
    }
    this.#oldest = next.done ? undefined : next.value;
    return this.#oldest;
  }

  #forget(key: string): void {
    this.#completed.delete(key);
    if (key === this.#oldest) this.#oldest = undefined;
  }
}
