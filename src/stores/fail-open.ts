import { WebhookConfigError } from '../base/errors.js';
import { newOwnerToken } from './owner-token.js';
import type { ClaimResult, DedupeStore } from './types.js';

export interface FailOpenOptions {
  /** Told about every claim that failed and was let through unguarded: log or count it. */
  onUnavailable?(error: unknown, key: string): void;
}

/**
 * Opt-in fail-open: when the store cannot be reached, process the event anyway instead of answering 503.
 * The risk: while the store is down nothing is deduplicated, so a retry or replay landing then (on this
 * or another instance) runs its handlers again, and events processed then are not remembered afterwards.
 * Only for handlers whose effects are idempotent. Not for transactional stores: there is no claim to
 * commit the handlers' writes with.
 */
export function failOpen(store: DedupeStore, options: FailOpenOptions = {}): DedupeStore {
  if ((store as DedupeStore<unknown>).transact) {
    throw new WebhookConfigError(
      'failOpen(store) cannot wrap a transactional store (transactional: true): its writes need a claim to commit with. Use the store without failOpen, or without transactional.',
    );
  }
  // Claims let through are not in the store: settling them has nothing to change.
  const unguarded = new Set<string>();
  const settle = async (token: string, settleInStore: () => Promise<boolean>) =>
    unguarded.delete(token) || settleInStore();
  return {
    async claim(key, leaseMs): Promise<ClaimResult> {
      try {
        return await store.claim(key, leaseMs);
      } catch (error) {
        options.onUnavailable?.(error, key);
        const token = `unguarded:${newOwnerToken()}`;
        unguarded.add(token);
        return { status: 'claimed', token };
      }
    },
    complete: (key, token, retentionMs) => settle(token, () => store.complete(key, token, retentionMs)),
    release: (key, token) => settle(token, () => store.release(key, token)),
    renew: async (key, token, leaseMs) => unguarded.has(token) || store.renew(key, token, leaseMs),
  };
}
