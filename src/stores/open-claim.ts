import type { OpenClaimResult } from './types.js';

/** How the claim statement(s) inside the transaction went; anything but claimed rolls the transaction back. */
export type ClaimInTransaction =
  | { status: 'claimed' }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number };

/** What opening a claim needs of its store: its transaction, the claim and the completion on it, a deadline. */
export interface OpenClaimParts<Tx> {
  token: string;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction(work: (tx: Tx) => Promise<unknown>): Promise<unknown>;
  claim(tx: Tx): Promise<ClaimInTransaction>;
  /** Marks the key processed on `tx`; false when the claim is not this token's. */
  complete(tx: Tx, retentionMs: number): Promise<boolean>;
  /** The claim's deadline (the store's operationTimeoutMs): past it the transaction is rolled back. */
  within<T>(opening: Promise<T>): Promise<T>;
  /** The error the store reports for a failure of the transaction (a lost connection named as such). */
  explain(error: unknown): unknown;
  /** The error a completion that matched nothing throws (it rolls the work back). */
  takenOver: string;
}

/** What a completion that matched nothing says: the lease lapsed during the work and another owner took it. */
export const TAKEN_OVER =
  'The claim expired and was taken over while the handlers ran (longer than leaseMs): their writes were rolled ' +
  'back and the new owner processes the event. Raise leaseMs above the slowest handler.';

interface Next<Tx> {
  retentionMs: number;
  work: (tx: Tx) => Promise<unknown>;
}

/** Thrown in the transaction to roll it back when nothing is to be committed (not claimed, or abandoned). */
const ROLLBACK = Symbol('rollback');

/**
 * Opens a transaction, claims the key as its first statement, and keeps it open until the claim is run (the
 * work, the completion, the commit) or abandoned (a rollback, which frees the key as a release would). The
 * claim answers once its statements have: the transaction then waits for run() or abandon().
 */
export async function openClaim<Tx>(parts: OpenClaimParts<Tx>): Promise<OpenClaimResult<Tx>> {
  let answer!: (result: OpenClaimResult<Tx>) => void;
  let fail!: (error: unknown) => void;
  const opened = new Promise<OpenClaimResult<Tx>>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  let go!: (next: Next<Tx> | undefined) => void;
  const nextStep = new Promise<Next<Tx> | undefined>((resolve) => {
    go = resolve;
  });
  let decided = false;

  const transaction = explained(parts, async (tx) => {
    const claimed = await parts.claim(tx);
    if (claimed.status !== 'claimed') {
      answer(claimed);
      throw ROLLBACK;
    }
    answer({ status: 'claimed', token: parts.token, run, abandon });
    const next = await nextStep;
    if (next === undefined) throw ROLLBACK;
    const result = await next.work(tx);
    if (!(await parts.complete(tx, next.retentionMs))) throw new Error(parts.takenOver);
    return result;
  });
  // Before the claim answered, a failure is the claim's; a rollback asked for is no failure at all.
  const ended = transaction.then(
    () => undefined,
    (error: unknown) => {
      if (error !== ROLLBACK) fail(error);
    },
  );

  function run<R>(retentionMs: number, work: (tx: Tx) => Promise<R>): Promise<R> {
    decided = true;
    go({ retentionMs, work });
    return transaction as Promise<R>;
  }

  function abandon(): Promise<void> {
    if (decided) return Promise.resolve();
    decided = true;
    go(undefined);
    return ended;
  }

  try {
    return await parts.within(opened);
  } catch (error) {
    // A claim that answers after its deadline is rolled back, never left holding the key.
    decided = true;
    go(undefined);
    throw error;
  }
}

/** The transaction, its failures as the store names them; the rollback asked for passes as it is. */
async function explained<Tx>(
  parts: OpenClaimParts<Tx>,
  work: (tx: Tx) => Promise<unknown>,
): Promise<unknown> {
  try {
    return await parts.transaction(work);
  } catch (error) {
    throw error === ROLLBACK ? error : parts.explain(error);
  }
}
