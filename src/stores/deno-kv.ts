import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type Deadline, operationTimeout, StoreTimeoutError, withinOperationTimeout } from './deadline.js';
import { wellFormedKey } from './lossless-key.js';
import { newOwnerToken } from './owner-token.js';
import type { ClaimResult, DedupeStore } from './types.js';

/** A Deno KV key (`Deno.KvKey`). */
export type DenoKvKey = readonly (string | number | bigint | boolean | Uint8Array)[];

/** The part of a Deno KV atomic operation (`Deno.AtomicOperation`) the store uses. */
export interface DenoKvAtomic {
  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): DenoKvAtomic;
  set(key: DenoKvKey, value: unknown, options?: { expireIn?: number }): DenoKvAtomic;
  delete(key: DenoKvKey): DenoKvAtomic;
  commit(): Promise<{ ok: boolean }>;
}

/** The part of a Deno KV database (`await Deno.openKv()`) the store uses. */
export interface DenoKv {
  get<T>(key: DenoKvKey): Promise<{ value: T | null; versionstamp: string | null }>;
  atomic(): DenoKvAtomic;
}

export interface DenoKvDedupeStoreOptions {
  /** The database, from `await Deno.openKv()`. */
  kv: DenoKv;
  /** The first part of every key the store writes. Default `messaging-webhooks`. */
  prefix?: string;
  /**
   * Longest wait for one operation (milliseconds, default 3000). Past it the operation rejects and the event
   * is answered 503 store_unavailable, so the service retries it.
   */
  operationTimeoutMs?: number;
}

type DedupeRecord = { token: string; leaseEnd: number; until: number } | { done: true; until: number };
type Step<R> = { reply: R; write?: DedupeRecord | null };

const STORE = 'The Deno KV store';

/**
 * Dedupe store on Deno KV, for Deno Deploy and other Deno instances sharing one database. One key per event,
 * `[prefix, key]`, holding a lease or a completion. Each operation reads the key and writes it in an atomic
 * operation that checks the key's versionstamp, so of two instances writing the same key one commits and the
 * other reads it again: a claim goes to exactly one of them. Leases are measured by each instance's clock.
 * Records carry Deno KV's `expireIn`, so a completion is deleted after its retention and an unsettled lease
 * after two leases.
 */
export class DenoKvDedupeStore implements DedupeStore {
  readonly prefix: string;
  readonly operationTimeoutMs: number;
  readonly #kv: DenoKv;

  constructor(options: DenoKvDedupeStoreOptions) {
    const kv = options?.kv;
    if (
      typeof kv !== 'object' ||
      kv === null ||
      typeof kv.get !== 'function' ||
      typeof kv.atomic !== 'function'
    ) {
      throw new WebhookConfigError(
        `new DenoKvDedupeStore({ kv }) needs a Deno KV database from \`await Deno.openKv()\`, got ${kindOf(kv)}.`,
      );
    }
    this.prefix = options.prefix ?? 'messaging-webhooks';
    if (typeof this.prefix !== 'string') {
      throw new WebhookConfigError(
        `new DenoKvDedupeStore({ prefix }): prefix must be a string, got ${kindOf(this.prefix)}.`,
      );
    }
    this.#kv = kv;
    this.operationTimeoutMs = operationTimeout('DenoKvDedupeStore', options.operationTimeoutMs);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    let work: Promise<ClaimResult> | undefined;
    try {
      return await withinOperationTimeout(this.operationTimeoutMs, STORE, (deadline) => {
        work = this.#update(key, deadline, (record, now): Step<ClaimResult> => {
          if (record !== undefined && 'done' in record) return { reply: { status: 'duplicate' } };
          if (record !== undefined && record.leaseEnd > now) {
            return { reply: { status: 'in_flight', retryAfterMs: record.leaseEnd - now } };
          }
          return { reply: { status: 'claimed', token }, write: lease(token, leaseMs, now) };
        });
        return work;
      });
    } catch (error) {
      // A claim this side stopped waiting for may still commit; once it settled, its release drops the lease.
      if (error instanceof StoreTimeoutError) work?.finally(() => this.release(key, token).catch(() => {}));
      throw error;
    }
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#settle(key, token, (now) => ({ done: true, until: now + retentionMs }));
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#settle(key, token, (now) => lease(token, leaseMs, now));
  }

  release(key: string, token: string): Promise<boolean> {
    return this.#settle(key, token, () => null);
  }

  /** Replaces (or with null deletes) a record `token` owns; false, changing nothing, when it does not. */
  #settle(key: string, token: string, next: (now: number) => DedupeRecord | null): Promise<boolean> {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, (deadline) =>
      this.#update(key, deadline, (record, now): Step<boolean> => {
        const owned = record !== undefined && 'token' in record && record.token === token;
        return owned ? { reply: true, write: next(now) } : { reply: false };
      }),
    );
  }

  /**
   * Reads the key's record, decides, and commits the write only if nobody wrote the key in between (its
   * versionstamp); otherwise decides again on what is there now, until the operation's deadline.
   */
  async #update<R>(
    key: string,
    deadline: Deadline,
    decide: (record: DedupeRecord | undefined, now: number) => Step<R>,
  ): Promise<R> {
    const kvKey: DenoKvKey = [this.prefix, wellFormedKey(key)];
    while (deadline.remainingMs() > 0) {
      const entry = await this.#kv.get<DedupeRecord>(kvKey);
      const now = Date.now();
      const record = entry.value !== null && entry.value.until > now ? entry.value : undefined;
      const { reply, write } = decide(record, now);
      if (write === undefined) return reply;
      const atomic = this.#kv.atomic().check({ key: kvKey, versionstamp: entry.versionstamp });
      const written =
        write === null
          ? atomic.delete(kvKey)
          : atomic.set(kvKey, write, { expireIn: Math.max(1, write.until - now) });
      if ((await written.commit()).ok) return reply;
    }
    // Past the deadline the caller was already answered; nothing more is written.
    throw new StoreTimeoutError(`${STORE} passed its deadline while other writes to the key kept winning.`);
  }
}

const lease = (token: string, leaseMs: number, now: number): DedupeRecord => ({
  token,
  leaseEnd: now + leaseMs,
  until: now + 2 * leaseMs,
});
