import { type Answer, answerTo, callUser, isThenable } from '../base/deadline.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { ClaimResult, DedupeStore, OpenClaim, OpenClaimResult } from '../stores/types.js';
import { ReplicasBehindError } from '../stores/unavailable.js';
import { claimInTransaction, handlerFailed, type Ran, runInTransaction } from './open-claim.js';
import { FAILED, type Failure, type Report } from './report.js';
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
  | { status: 'failed'; reason: Failure }
  | { status: 'abandoned' };

/** What a claim uses of its home (Claims): the store's calls, the lease keeper, retention, onError. */
export type ClaimParts<Tx> = Pick<Claims<Tx>, 'calls' | 'leases' | 'retentionMs' | 'report'>;

const COMPLETED: Settlement = { status: 'completed' };
const ABANDONED: Settlement = { status: 'abandoned' };
const NOT_COMMITTED: Ran = { ok: true, committed: false };

/**
 * One held claim's life after it was taken: its lease kept alive, its handlers run (in the store's transaction
 * when it has one), then exactly one settlement: complete after every handler succeeded, release when one failed
 * or when shutdown gave up on it (abandon), whatever order the end of the run and an abandon come in.
 */
export class Claim<Tx> {
  #state: 'held' | 'running' | 'settling' | 'settled' = 'held';
  /** While a failed run hands the claim back (settling): that settlement, which abandon() then waits for. */
  #failing: Promise<Settlement> | undefined;
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

  /**
   * Runs the handlers, then settles by how they ran; never rejects. With `to` (the executor's entry), answered
   * through it instead: the completion's answer reaches the request in the store call's own reaction.
   */
  run(): Promise<Settlement>;
  run(to: Answer<Settlement>): undefined;
  run(to?: Answer<Settlement>): Promise<Settlement> | undefined {
    if (!to) return new Promise<Settlement>((settle, fail) => this.run({ settle, fail }));
    this.#state = 'running';
    try {
      if (this.parts.calls.transactional) {
        runInTransaction(this).then(
          (ran) => this.#settleTo(ran, to),
          (error: unknown) => to.fail(error),
        );
      } else this.#handlers(to);
    } catch (error) {
      // A store whose transact getter throws: a bug passed on to the caller, as a rejection like any other.
      to.fail(error);
    }
    return undefined;
  }

  /** Shutdown gave up on the event: release the claim so the service's retry runs it, unless it is settling. */
  abandon(): Promise<unknown> {
    if (this.#state === 'settling' && this.#failing) return this.#failing;
    if (this.#state === 'settled') return Promise.resolve();
    this.#state = 'settled';
    return this.#release();
  }

  /** Settles by how the run went, answering `to` once; a bug in it is `to`'s failure, never a stray rejection. */
  #settleTo(ran: Ran, to: Answer<Settlement>): void {
    try {
      // Given up by shutdown while the handlers ran: the claim was released then.
      if (this.#state !== 'running') to.settle(ABANDONED);
      else if (ran.ok) this.#complete(ran.committed, to);
      else {
        this.#state = 'settling';
        this.#failing = this.#fail(ran.reason, ran.cause);
        answerTo(this.#failing, to);
      }
    } catch (error) {
      to.fail(error);
    }
  }

  /** The handlers without a transaction: whatever they do (throw, answer nothing or any thenable) settles it. */
  #handlers(to: Answer<Settlement>): void {
    let handled: Promise<void> | undefined;
    try {
      handled = this.handle(undefined as Tx);
    } catch (error) {
      handled = Promise.reject(error);
    }
    (handled === undefined ? NOTHING_RAN : Promise.resolve(handled)).then(
      () => this.#settleTo(NOT_COMMITTED, to),
      (error: unknown) => this.#settleTo(handlerFailed(error), to),
    );
  }

  #complete(committed: boolean, to: Answer<Settlement>): void {
    const { calls, retentionMs, leases } = this.parts;
    leases.drop(this.#lease);
    this.#state = 'settled';
    // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only means the
    // lease expires and a later retry may run the event again (at-least-once).
    if (committed) to.settle(COMPLETED);
    else
      calls.complete(
        this.held,
        retentionMs,
        (owned) => (owned ? COMPLETED : this.#lost()),
        (cause: unknown) => this.#unrecorded(cause),
        to,
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
    if (cause instanceof ReplicasBehindError && !cause.accepted) return this.#fail('not_replicated', cause);
    await this.#tell('store_unavailable', 'The dedupe store failed to record a completed event.', cause);
    return COMPLETED;
  }

  /** Hands the claim back (after not_replicated, only a claim the completion never reached) and tells onError. */
  async #fail(reason: Failure, cause: unknown): Promise<Settlement> {
    await this.#release();
    this.#state = 'settled';
    const code = reason === 'handler_failed' ? reason : 'store_unavailable';
    await this.#tell(code, FAILED[reason](this.held.context.eventType), cause);
    return { status: 'failed', reason };
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
