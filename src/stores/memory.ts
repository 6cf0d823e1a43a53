import type { ClaimResult, DedupeStore } from './types.js';

export interface MemoryDedupeStoreOptions {
  /** Most keys kept (in flight + completed). Past it the oldest completed keys go first. Default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

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
  #nextToken = 0;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new TypeError('MemoryDedupeStore maxEntries must be a whole number of at least 1.');
    }
    this.#now = options.now ?? Date.now;
    this.#epoch = this.#now();
  }

  get size(): number {
    return this.#leases.size + this.#completed.size;
  }

  claim(key: string, leaseMs: number): Promise<ClaimResult> {
    return Promise.resolve(this.claimSync(key, leaseMs));
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return Promise.resolve(this.completeSync(key, token, retentionMs));
  }

  release(key: string, token: string): Promise<boolean> {
    if (this.#leases.get(key)?.token !== token) return Promise.resolve(false);
    this.#leases.delete(key);
    return Promise.resolve(true);
  }

  claimSync(key: string, leaseMs: number): ClaimResult {
    const now = this.#now();
    const expiry = this.#completed.get(key);
    if (expiry !== undefined) {
      if (this.#epoch + expiry * 1000 > now) return { status: 'duplicate' };
      this.#completed.delete(key);
    }
    const lease = this.#leases.get(key);
    if (lease && lease.expiresAt > now) return { status: 'in_flight', retryAfterMs: lease.expiresAt - now };
    if (!lease) this.#makeRoom(now);
    const token = String(++this.#nextToken);
    this.#leases.set(key, { token, expiresAt: now + leaseMs });
    return { status: 'claimed', token };
  }

  completeSync(key: string, token: string, retentionMs: number): boolean {
    // A lease that expired but was not taken over is still ours: the work did succeed.
    if (this.#leases.get(key)?.token !== token) return false;
    this.#leases.delete(key);
    this.#completed.set(key, Math.ceil((this.#now() + retentionMs - this.#epoch) / 1000));
    return true;
  }

  /** Drops everything; for tests. */
  clear(): void {
    this.#leases.clear();
    this.#completed.clear();
  }

  #makeRoom(now: number): void {
    if (this.size < this.maxEntries) return;
    const nowSeconds = (now - this.#epoch) / 1000;
    // Oldest completions first; with one retention for all keys they are also the first to expire.
    for (const [key, expiry] of this.#completed) {
      if (expiry > nowSeconds && this.size < this.maxEntries) break;
      this.#completed.delete(key);
    }
    if (this.size < this.maxEntries) return;
    for (const [key, lease] of this.#leases) {
      if (lease.expiresAt <= now) this.#leases.delete(key);
      if (this.size < this.maxEntries) return;
    }
  }
}
