import type { Awaitable } from '../base/deadline.js';
import type { DedupeStore, OpenClaimResult } from '../stores/types.js';
import { answerOf, checkClaim, type Failed, type StoreCalls, StoreContractError } from './store-calls.js';

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
