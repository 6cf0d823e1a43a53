import type { ErrorCode } from '../base/errors.js';
import type { ErrorContext } from '../receiver/handlers.js';
import type { ClaimResult, DedupeStore } from '../stores/types.js';
import type { Job } from './7-execute.js';
import { LeaseKeeper } from './lease-keeper.js';

/** How a claimed event ended for its request: completed, released after a failure, or given up at shutdown. */
export type Settlement =
  | { status: 'completed' }
  | { status: 'failed'; reason: 'handler_failed' | 'store_unavailable' }
  | { status: 'abandoned' };

export type ClaimAttempt<Tx> =
  | { status: 'claimed'; claim: Claim<Tx> }
  | { status: 'duplicate' }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'unavailable' };

/** Tells onError: one failure, one reason code, the same on the error and in its context. */
export type Report = (
  code: ErrorCode,
  message: string,
  cause: unknown,
  context: ErrorContext,
) => Promise<void>;

/**
 * A store that can claim and complete without waiting (the memory store): the claim module uses these, so an
 * in-process store costs no promise per operation.
 */
interface ImmediateStore {
  claimSync(key: string, leaseMs: number): ClaimResult;
  completeSync(key: string, token: string, retentionMs: number): boolean;
}

function immediate(store: DedupeStore<unknown>): ImmediateStore | undefined {
  const candidate = store as Partial<ImmediateStore>;
  return typeof candidate.claimSync === 'function' && typeof candidate.completeSync === 'function'
    ? (candidate as ImmediateStore)
    : undefined;
}

export interface ClaimsOptions<Tx> {
  store: DedupeStore<Tx>;
  leaseMs: number;
  retentionMs: number;
  report: Report;
}

const COMPLETED: Settlement = { status: 'completed' };
const ABANDONED: Settlement = { status: 'abandoned' };

/**
 * The one home of an event's claim: the dedupe key, the claim, its lease kept alive while the event waits or
 * runs in this process, and exactly one settlement: complete after every handler succeeded (inside the store's
 * transaction when it has one), release when one failed or when shutdown gave up on it.
 */
export class Claims<Tx> {
  readonly leases: LeaseKeeper;
  readonly immediate: ImmediateStore | undefined;

  constructor(readonly options: ClaimsOptions<Tx>) {
    this.leases = new LeaseKeeper(options.store, options.leaseMs, options.report);
    this.immediate = immediate(options.store as DedupeStore<unknown>);
  }

  /**
   * Claims the event under `key`. `handle` runs its handlers (with the transaction's client when the store is
   * transactional) once the returned claim is run. Synchronous for a store that answers at once.
   */
  take(
    key: string,
    handle: (tx: Tx) => Promise<void>,
    context: ErrorContext,
  ): ClaimAttempt<Tx> | Promise<ClaimAttempt<Tx>> {
    if (this.immediate) {
      try {
        return this.#attempt(this.immediate.claimSync(key, this.options.leaseMs), key, handle, context);
      } catch (cause) {
        return this.#unavailable(cause, context);
      }
    }
    return this.options.store.claim(key, this.options.leaseMs).then(
      (result) => this.#attempt(result, key, handle, context),
      (cause) => this.#unavailable(cause, context),
    );
  }

  #attempt(
    result: ClaimResult,
    key: string,
    handle: (tx: Tx) => Promise<void>,
    context: ErrorContext,
  ): ClaimAttempt<Tx> {
    if (result.status !== 'claimed') return result;
    return { status: 'claimed', claim: new Claim(this, key, result.token, handle, context) };
  }

  async #unavailable(cause: unknown, context: ErrorContext): Promise<ClaimAttempt<Tx>> {
    await this.options.report(
      'store_unavailable',
      'The dedupe store failed to claim an event.',
      cause,
      context,
    );
    return { status: 'unavailable' };
  }
}

type ClaimState = 'held' | 'running' | 'settling' | 'settled';

/** One claimed event, run by the executor: settles its claim exactly once, whatever order run and abandon come in. */
export class Claim<Tx> implements Job<Settlement> {
  #state: ClaimState = 'held';
  #settling: Promise<unknown> | undefined;

  constructor(
    readonly claims: Claims<Tx>,
    readonly key: string,
    readonly token: string,
    readonly handle: (tx: Tx) => Promise<void>,
    readonly context: ErrorContext,
  ) {
    claims.leases.keep(this);
  }

  async run(): Promise<Settlement> {
    this.#state = 'running';
    const { store, retentionMs } = this.claims.options;
    let handlerError: unknown;
    const dispatch = async (tx: Tx) => {
      try {
        await this.handle(tx);
      } catch (error) {
        handlerError = error ?? new Error('A handler rejected without a reason.');
        throw handlerError;
      }
    };
    let failed = false;
    let failure: unknown;
    try {
      if (store.transact) await store.transact(this.key, this.token, retentionMs, dispatch);
      else await dispatch(undefined as Tx);
    } catch (error) {
      failed = true;
      failure = error;
    }
    // Given up by shutdown while the handlers ran: the claim was released then.
    if (this.#state !== 'running') return ABANDONED;
    this.#state = 'settling';
    const settled = failed
      ? this.#fail(handlerError !== undefined ? 'handler_failed' : 'store_unavailable', failure)
      : this.#complete(store.transact !== undefined);
    this.#settling = settled;
    return settled;
  }

  /** Shutdown gave up on the event: release the claim so the service's retry runs it, unless it is settling. */
  abandon(): Promise<unknown> {
    if (this.#state === 'settling') return this.#settling as Promise<unknown>;
    if (this.#state === 'settled') return Promise.resolve();
    this.#state = 'settled';
    return this.#release();
  }

  async #fail(reason: 'handler_failed' | 'store_unavailable', cause: unknown): Promise<Settlement> {
    await this.#release();
    this.#state = 'settled';
    const message =
      reason === 'handler_failed'
        ? `A handler for ${this.context.eventType} failed; the claim was released so the service's retry runs it again.`
        : `The dedupe store failed while running ${this.context.eventType} in its transaction; the claim was released.`;
    await this.claims.options.report(reason, message, cause, this.context);
    return { status: 'failed', reason };
  }

  async #complete(committed: boolean): Promise<Settlement> {
    this.claims.leases.drop(this);
    this.#state = 'settled';
    if (committed) return COMPLETED;
    // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only means the
    // lease expires and a later retry may run the event again (at-least-once).
    const { store, retentionMs, report } = this.claims.options;
    const { immediate } = this.claims;
    try {
      const owned = immediate
        ? immediate.completeSync(this.key, this.token, retentionMs)
        : await store.complete(this.key, this.token, retentionMs);
      if (!owned) {
        await report(
          'lease_lost',
          `The claim of ${this.context.eventType} was taken over before it completed; a retry may run it again.`,
          undefined,
          this.context,
        );
      }
    } catch (cause) {
      await report(
        'store_unavailable',
        'The dedupe store failed to record a completed event.',
        cause,
        this.context,
      );
    }
    return COMPLETED;
  }

  async #release(): Promise<void> {
    this.claims.leases.drop(this);
    try {
      await this.claims.options.store.release(this.key, this.token);
    } catch (cause) {
      // The lease expires by itself; until then a retry answers 409 event_in_progress.
      await this.claims.options.report(
        'store_unavailable',
        'The dedupe store failed to release a claim; a retry is answered event_in_progress until its lease ends.',
        cause,
        this.context,
      );
    }
  }
}
