import { type Answer, answerTo, callUser, isThenable } from '../base/deadline.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { ClaimResult, DedupeStore, OpenClaim, OpenClaimResult } from '../stores/types.js';
import { ReplicasBehindError } from '../stores/unavailable.js';
import { claimInTransaction, type Ran, REJECTED_WITHOUT_REASON, runInTransaction } from './open-claim.js';
import type { Report } from './report.js';
import { type Held, type KeptLease, LeaseKeeper, StoreCalls } from './store-calls.js';

// One claim's life, in the order it runs: Claims.take claims the event's key on the store, and the Claim it returns
// keeps its lease, runs the handlers (the registry's dispatching, below; in the store's transaction when it has
// one, open-claim.ts), then completes or releases exactly once, or shutdown abandons it. A request's walk
// (pipeline/4-run.ts) and a durable worker's inbox (durable/inbox-run.ts) both go through it.

export interface ClaimsOptions<Tx> {
  store: DedupeStore<Tx>;
  leaseMs: number;
  retentionMs: number;
  /** How long any one call to the store may take before it counts as failed (503 store_unavailable). */
  storeTimeoutMs: number;
  report: Report;
}

/** How taking a claim went: held (the claim, which runs the handlers and settles), or why not. */
export type Taken<Tx> =
  | { status: 'claimed'; claim: Claim<Tx> }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'unavailable'; reason: 'store_unavailable' | 'not_replicated' };

/**
 * The one home of events' claims on a store, for a request's walk and a durable worker alike: the store's calls,
 * the leases kept alive while an event waits or runs in this process, and take(), where a claim's life starts.
 */
export class Claims<Tx> {
  readonly calls: StoreCalls<Tx>;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly report: Report;
  readonly leases: LeaseKeeper;

  constructor(options: ClaimsOptions<Tx>) {
    this.calls = new StoreCalls(options.store, options.storeTimeoutMs);
    this.leaseMs = options.leaseMs;
    this.retentionMs = options.retentionMs;
    this.report = options.report;
    this.leases = new LeaseKeeper(this.calls as StoreCalls<unknown>, options.leaseMs, options.report);
  }

  /**
   * Takes the claim of `key` for the length of a lease: held (its lease kept alive from now until it settles,
   * `handle` its handlers), or a duplicate, an event another run holds, or a store that failed in any way.
   * Never rejects. With `to`, answered through it instead of a promise.
   */
  take(key: string, context: ErrorContext, handle: Handle<Tx>): Promise<Taken<Tx>>;
  take(key: string, context: ErrorContext, handle: Handle<Tx>, to: Answer<Taken<Tx>>): undefined;
  take(key: string, context: ErrorContext, handle: Handle<Tx>, to?: Answer<Taken<Tx>>) {
    // What the store answered, or why it failed, becomes the taken claim in the store call's own reaction.
    const taken = (result: ClaimResult | OpenClaimResult<Tx>): Taken<Tx> => {
      if (result.status !== 'claimed') return result;
      const open = 'run' in result ? (result as unknown as OpenClaim<Tx>) : undefined;
      return {
        status: 'claimed',
        claim: new Claim(this, { key, token: result.token, context }, handle, open),
      };
    };
    const unavailable = (cause: unknown) => this.#unavailable(cause, context);
    try {
      // Reading the store's methods runs its code too (a getter may throw).
      return this.calls.opensTransactions
        ? answerTo(claimInTransaction(this.calls, key, this.leaseMs, taken, unavailable), to)
        : this.calls.claim(key, this.leaseMs, taken, unavailable, to);
    } catch (cause) {
      return answerTo(this.#unavailable(cause, context), to);
    }
  }

  async #unavailable(cause: unknown, context: ErrorContext): Promise<Taken<Tx>> {
    // A duplicate whose completion the replicas asked for (waitForReplicas) do not hold yet: processed, not held.
    if (cause instanceof ReplicasBehindError) {
      const message = 'An event was processed, but its completion is not on enough replicas yet.';
      await this.report('store_unavailable', message, cause, context);
      return NOT_REPLICATED;
    }
    await this.report('store_unavailable', 'The dedupe store failed to claim an event.', cause, context);
    return UNAVAILABLE;
  }
}

const UNAVAILABLE = { status: 'unavailable', reason: 'store_unavailable' } as const;
const NOT_REPLICATED = { status: 'unavailable', reason: 'not_replicated' } as const;

/** An event's handlers, given the store's transaction (undefined on a store without one). */
export type Handle<Tx> = (tx: Tx) => Promise<void> | undefined;

/** How a claimed event ended: completed, released after a failure, or given up at shutdown. */
export type Settlement =
  | { status: 'completed' }
  | { status: 'failed'; reason: 'handler_failed' | 'store_unavailable' | 'not_replicated' }
  | { status: 'abandoned' };

/** What a claim uses of its home (Claims): the store's calls, the lease keeper, retention, onError. */
export interface ClaimParts<Tx> {
  readonly calls: StoreCalls<Tx>;
  readonly leases: LeaseKeeper;
  readonly retentionMs: number;
  readonly report: Report;
}

const COMPLETED: Settlement = { status: 'completed' };
const ABANDONED: Settlement = { status: 'abandoned' };
const NOT_COMMITTED: Ran = { ok: true, committed: false };

/**
 * One held claim's life after it was taken: its lease kept alive, its handlers run (in the store's
 * transaction when it has one), then exactly one settlement: complete after every handler succeeded, release
 * when one failed or when shutdown gave up on it (abandon), whatever order the end of the run and an abandon
 * come in.
 */
export class Claim<Tx> {
  #state: 'held' | 'running' | 'settling' | 'settled' = 'held';
  #run: Promise<Settlement> | undefined;
  readonly #lease: KeptLease | undefined;

  /**
   * @param open the transaction the claim was taken in, when the store claims inside it: the claim is not
   * committed until the handlers' work is, so there is no lease to keep (the open transaction holds the key),
   * and a release is its rollback.
   */
  constructor(
    readonly parts: ClaimParts<Tx>,
    readonly held: Held,
    readonly handle: Handle<Tx>,
    readonly open?: OpenClaim<Tx>,
  ) {
    this.#lease = open ? undefined : parts.leases.keep(held);
  }

  /** Runs the handlers, then settles by how they ran; never rejects. */
  run(): Promise<Settlement> {
    this.#state = 'running';
    try {
      this.#run = this.parts.calls.transactional
        ? runInTransaction(this).then((ran) => this.#settle(ran))
        : this.#handlers();
    } catch (error) {
      // A store whose transact getter throws: a bug passed on to the caller, as a rejection like any other.
      this.#run = Promise.reject(error);
    }
    return this.#run;
  }

  /** Shutdown gave up on the event: release the claim so the service's retry runs it, unless it is settling. */
  abandon(): Promise<unknown> {
    if (this.#state === 'settling' && this.#run) return this.#run;
    if (this.#state === 'settled') return Promise.resolve();
    this.#state = 'settled';
    return this.#release();
  }

  #settle(ran: Ran): Settlement | Promise<Settlement> {
    // Given up by shutdown while the handlers ran: the claim was released then.
    if (this.#state !== 'running') return ABANDONED;
    this.#state = 'settling';
    return ran.ok ? this.#complete(ran.committed) : this.#fail(ran.reason, ran.cause);
  }

  /**
   * The handlers without a transaction, then the settlement: whatever they do (throw, answer nothing or any
   * thenable) settles it. One reaction per claim, each side a closure over the claim and nothing else.
   */
  #handlers(): Promise<Settlement> {
    let handled: Promise<void> | undefined;
    try {
      handled = this.handle(undefined as Tx);
    } catch (error) {
      handled = Promise.reject(error);
    }
    return (handled === undefined ? NOTHING_RAN : Promise.resolve(handled)).then(
      () => this.#settle(NOT_COMMITTED),
      (error: unknown) => this.#settle(handlerFailed(error)),
    );
  }

  #complete(committed: boolean): Settlement | Promise<Settlement> {
    const { calls, retentionMs, leases } = this.parts;
    leases.drop(this.#lease);
    this.#state = 'settled';
    if (committed) return COMPLETED;
    // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only means the
    // lease expires and a later retry may run the event again (at-least-once).
    return calls.complete(
      this.held,
      retentionMs,
      (owned) => (owned ? COMPLETED : this.#lost()),
      (cause: unknown) => this.#unrecorded(cause),
    );
  }

  async #lost(): Promise<Settlement> {
    const { eventType } = this.held.context;
    const message = `The claim of ${eventType} was taken over before it completed; a retry may run it again.`;
    await this.#tell('lease_lost', message, undefined);
    return COMPLETED;
  }

  async #unrecorded(cause: unknown): Promise<Settlement> {
    // A completion the replicas asked for (waitForReplicas) do not hold is never acknowledged.
    if (cause instanceof ReplicasBehindError && !cause.accepted) return this.#unreplicated(cause);
    await this.#tell('store_unavailable', 'The dedupe store failed to record a completed event.', cause);
    return COMPLETED;
  }

  async #fail(reason: 'handler_failed' | 'store_unavailable', cause: unknown): Promise<Settlement> {
    await this.#release();
    this.#state = 'settled';
    const { eventType } = this.held.context;
    const message =
      reason === 'handler_failed'
        ? `A handler for ${eventType} failed; the claim was released so the service's retry runs it again.`
        : `The dedupe store failed while running ${eventType} in its transaction; the claim was released.`;
    await this.#tell(reason, message, cause);
    return { status: 'failed', reason };
  }

  async #unreplicated(cause: unknown): Promise<Settlement> {
    // A completion that landed is not owned by the token any more: only a claim it never reached is dropped.
    await this.#release();
    await this.#tell(
      'store_unavailable',
      'The completion of an event is not on enough replicas; it is answered 503 not_replicated until they hold it.',
      cause,
    );
    return { status: 'failed', reason: 'not_replicated' };
  }

  async #release(): Promise<void> {
    this.parts.leases.drop(this.#lease);
    try {
      if (this.open) await this.open.abandon();
      else await this.parts.calls.release(this.held.key, this.held.token);
    } catch (cause) {
      // The lease expires by itself; until then a retry answers 409 event_in_progress.
      await this.#tell(
        'store_unavailable',
        'The dedupe store failed to release a claim; a retry is answered event_in_progress until its lease ends.',
        cause,
      );
    }
  }

  #tell(code: Parameters<Report>[0], message: string, cause: unknown): Promise<void> {
    return this.parts.report(code, message, cause, this.held.context);
  }
}
const NOTHING_RAN: Promise<void> = Promise.resolve();

function handlerFailed(error: unknown): Ran {
  return { ok: false, reason: 'handler_failed', cause: error ?? REJECTED_WITHOUT_REASON() };
}

/** A handler as a registry holds it: the registry checks its event's type when it is added. */
export type StoredHandler = (event: never, ctx: HandlerContext<never>) => unknown;

/**
 * An event's handlers run, made once per registry over its lists: those of its type, then those of any event;
 * undefined when it has none (nothing ran). All are awaited even when one fails, so none still runs when the
 * claim is released; one failure rejects with its error, several with an AggregateError holding every one.
 */
export function dispatching<Tx>(
  byType: ReadonlyMap<string, readonly StoredHandler[]>,
  any: readonly StoredHandler[],
): (event: { type: string }, ctx: HandlerContext<Tx>) => Promise<void> | undefined {
  return function dispatchNow(event, ctx) {
    const typed = byType.get(event.type);
    const count = (typed?.length ?? 0) + any.length;
    if (count === 0) return undefined;
    if (count === 1) return runOne((typed?.[0] ?? any[0]) as StoredHandler, event, ctx);
    const runs: (Promise<void> | undefined)[] = [];
    for (const handler of typed ?? []) runs.push(runOne(handler, event, ctx));
    for (const handler of any) runs.push(runOne(handler, event, ctx));
    return Promise.allSettled(runs).then(throwFailures);
  };
}

/**
 * Calls one handler as user code is called (callUser): what it returned when that waits, as a native promise
 * (a synchronous throw is a rejected one), or undefined when it returned at once: nothing left to wait for.
 */
function runOne(handler: StoredHandler, event: unknown, ctx: unknown): Promise<void> | undefined {
  const ran = callUser(() => (handler as (e: unknown, c: unknown) => unknown)(event, ctx));
  return isThenable(ran) ? (ran as Promise<void>) : undefined;
}

function throwFailures(results: PromiseSettledResult<void>[]): void {
  const errors: unknown[] = [];
  for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} handlers of one event failed.`);
}
