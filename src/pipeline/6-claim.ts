import { type Awaitable, andThen, isThenable } from '../base/awaitable.js';
import type { ErrorContext } from '../contract/context.js';
import type { ClaimResult } from '../stores/types.js';
import { ReplicasBehindError } from '../stores/unavailable.js';
import type { Keyed } from './5-dedupe-key.js';
import { Settle } from './8-settle.js';
import type { Claims } from './claims.js';
import { DUPLICATE, type Stop } from './stop.js';

/** An event this request holds the claim of: its settlement (8-settle) is bound to it from now on. */
export interface Claimed {
  readonly keyed: Keyed;
  readonly settle: Settle;
}

/** How taking a claim went: held (with the settlement that ends it), or why not. */
export type ClaimAttempt =
  | { status: 'claimed'; settle: Settle }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'unavailable'; reason: 'store_unavailable' | 'not_replicated' };

/**
 * The claim stage: takes the event's key in the store for the length of a lease, or stops the walk: a
 * duplicate, an event another delivery holds (retry once its lease may have ended), or a store that failed in
 * any way. Never rejects. Synchronous with a store that answers at once.
 */
export function claim<Tx>(keyed: Keyed, claims: Claims<Tx>): Awaitable<Claimed | Stop> {
  return andThen(takeClaim(claims, keyed.key, keyed.context), (attempt) => stepOf(keyed, attempt));
}

/** Takes the claim of `key` (a request's walk, or a durable worker's inbox); never rejects. */
export function takeClaim<Tx>(
  claims: Claims<Tx>,
  key: string,
  context: ErrorContext,
): Awaitable<ClaimAttempt> {
  const result = claims.calls.claim(key, claims.leaseMs);
  if (!isThenable(result)) return attemptOf(result, claims, key, context);
  return Promise.resolve(result).then(
    (taken) => attemptOf(taken, claims, key, context),
    (cause: unknown) => unavailable(cause, claims, context),
  );
}

function attemptOf<Tx>(
  result: ClaimResult,
  claims: Claims<Tx>,
  key: string,
  context: ErrorContext,
): ClaimAttempt {
  if (result.status !== 'claimed') return result;
  const settle = new Settle(claims as Claims<unknown>, { key, token: result.token, context });
  return { status: 'claimed', settle };
}

async function unavailable<Tx>(
  cause: unknown,
  claims: Claims<Tx>,
  context: ErrorContext,
): Promise<ClaimAttempt> {
  // A duplicate whose completion the replicas asked for (waitForReplicas) do not hold yet: processed, not held.
  if (cause instanceof ReplicasBehindError) {
    const message = 'An event was processed, but its completion is not on enough replicas yet.';
    await claims.report('store_unavailable', message, cause, context);
    return NOT_REPLICATED;
  }
  await claims.report('store_unavailable', 'The dedupe store failed to claim an event.', cause, context);
  return UNAVAILABLE;
}

const UNAVAILABLE: ClaimAttempt = { status: 'unavailable', reason: 'store_unavailable' };
const NOT_REPLICATED: ClaimAttempt = { status: 'unavailable', reason: 'not_replicated' };

function stepOf(keyed: Keyed, attempt: ClaimAttempt): Claimed | Stop {
  switch (attempt.status) {
    case 'claimed':
      return { keyed, settle: attempt.settle };
    case 'duplicate':
      return DUPLICATE;
    case 'unavailable':
      return { stop: attempt.reason };
    case 'in_flight':
      return {
        stop: 'event_in_progress',
        retryAfterSeconds: Math.max(1, Math.ceil(attempt.retryAfterMs / 1000)),
      };
  }
}
