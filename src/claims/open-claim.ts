import type { Awaitable } from '../base/deadline.js';
import type { DedupeStore, OpenClaim, OpenClaimResult } from '../stores/types.js';
import { StoreUnavailableError } from '../stores/unavailable.js';
import {
  answerOf,
  checkClaim,
  type Failed,
  type Held,
  type StoreCalls,
  StoreContractError,
} from './store-calls.js';

// A claim in the store's transaction, for a store that has one: taken as the transaction's first statement
// (claimInTransaction), and its handlers run inside it (runInTransaction), committed with its completion.

/**
 * The claim taken as the first statement of the transaction the handlers run in (a store with
 * claimInTransaction, see StoreCalls.opensTransactions), bounded like any claim: one that lands after its
 * deadline holds a transaction nobody will run, so it is rolled back.
 */
export function claimInTransaction<Tx, T>(
  calls: StoreCalls<Tx>,
  key: string,
  leaseMs: number,
  answer: (result: OpenClaimResult<Tx>) => Awaitable<T>,
  failed: Failed<T>,
): Promise<T> {
  const { store } = calls;
  const claimInTransaction = store.claimInTransaction as NonNullable<DedupeStore<Tx>['claimInTransaction']>;
  const claiming = answerOf(() => claimInTransaction.call(store, key, leaseMs));
  const check = (result: OpenClaimResult<Tx>) => answer(checkOpenClaim(result));
  return calls.within('claim', claiming, check, () => void abandonLate(claiming), failed);
}

function checkOpenClaim<Tx>(answer: OpenClaimResult<Tx>): OpenClaimResult<Tx> {
  const result = checkClaim(answer) as OpenClaimResult<Tx>;
  if (
    result.status === 'claimed' &&
    (typeof result.run !== 'function' || typeof result.abandon !== 'function')
  )
    throw new StoreContractError(
      `The dedupe store's claimInTransaction() resolved a claim without run() and abandon().`,
    );
  return result;
}

async function abandonLate<Tx>(claiming: Promise<OpenClaimResult<Tx>>): Promise<void> {
  try {
    const late = checkOpenClaim(await claiming);
    if (late.status === 'claimed') await late.abandon();
  } catch {
    // The claim failed after all: nothing to roll back.
  }
}

/** How a claim's handlers ran: all succeeded (committed with the claim on a transactional store), or not. */
export type Ran =
  | { ok: true; committed: boolean }
  | { ok: false; reason: 'handler_failed' | 'store_unavailable'; cause: unknown };

const COMMITTED: Ran = { ok: true, committed: true };

export const REJECTED_WITHOUT_REASON = () => new Error('A handler rejected without a reason.');

/** A run whose handlers failed with `error` (a rejection without a reason gets one). */
export function handlerFailed(error: unknown): Ran {
  return { ok: false, reason: 'handler_failed', cause: error ?? REJECTED_WITHOUT_REASON() };
}

/** What running its handlers in the transaction needs of a claim (the Claim of claim.ts). */
interface Transacting<Tx> {
  readonly parts: { readonly calls: StoreCalls<Tx>; readonly retentionMs: number };
  readonly held: Held;
  readonly handle: (tx: Tx) => Promise<void> | undefined;
  readonly open?: OpenClaim<Tx> | undefined;
}

/** Runs a claim's handlers inside the store's transaction; a failure says whose it was. */
export async function runInTransaction<Tx>(claim: Transacting<Tx>): Promise<Ran> {
  let handlerError: unknown;
  const work = async (tx: Tx) => {
    try {
      await claim.handle(tx);
    } catch (error) {
      handlerError = error ?? REJECTED_WITHOUT_REASON();
      throw handlerError;
    }
  };
  const { key, token } = claim.held;
  try {
    if (claim.open) await claim.open.run(claim.parts.retentionMs, work);
    else await claim.parts.calls.transact(key, token, claim.parts.retentionMs, work);
    return COMMITTED;
  } catch (cause) {
    // A handler that met a lost connection or a failover failed because of the store.
    if (handlerError !== undefined && !(cause instanceof StoreUnavailableError)) {
      return { ok: false, reason: 'handler_failed', cause };
    }
    return { ok: false, reason: 'store_unavailable', cause };
  }
}
