import type { ClaimResult, DedupeStore } from '../stores/types.js';

/**
 * A store that can claim and complete without waiting (the memory store): claim and settle use these, so an
 * in-process store costs no promise per operation.
 */
export interface ImmediateStore {
  claimSync(key: string, leaseMs: number): ClaimResult;
  completeSync(key: string, token: string, retentionMs: number): boolean;
}

export function immediate(store: DedupeStore<unknown>): ImmediateStore | undefined {
  const candidate = store as Partial<ImmediateStore>;
  return typeof candidate.claimSync === 'function' && typeof candidate.completeSync === 'function'
    ? (candidate as ImmediateStore)
    : undefined;
}
