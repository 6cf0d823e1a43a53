import { type Awaitable, isThenable } from '../base/awaitable.js';
import { ReplicasBehindError } from '../stores/unavailable.js';
import type { Claims } from './claims.js';
import type { Held, KeptLease } from './lease-keeper.js';

/** How a claimed event ended for its request: completed, released after a failure, or given up at shutdown. */
export type Settlement =
  | { status: 'completed' }
  | { status: 'failed'; reason: 'handler_failed' | 'store_unavailable' | 'not_replicated' }
  | { status: 'abandoned' };

/** How a claim's handlers ran: all succeeded (committed with the claim on a transactional store), or not. */
export type Ran =
  | { ok: true; committed: boolean }
  | { ok: false; reason: 'handler_failed' | 'store_unavailable'; cause: unknown };

const COMPLETED: Settlement = { status: 'completed' };
const ABANDONED: Settlement = { status: 'abandoned' };

/**
 * The one settlement of a claim: complete after every handler succeeded, release when one failed or when
 * shutdown gave up on it. Exactly once, whatever order the end of the run and an abandon come in. Its lease is
 * kept alive from the claim to the settlement.
 */
export class Settle {
  #state: 'held' | 'running' | 'settling' | 'settled' = 'held';
  #settling: Promise<Settlement> | undefined;
  readonly #lease: KeptLease | undefined;

  constructor(
    readonly claims: Claims<unknown>,
    readonly held: Held,
  ) {
    this.#lease = claims.leases.keep(held);
  }

  /** The handlers start: from now on an abandon releases the claim under them. */
  running(): void {
    this.#state = 'running';
  }

  /** The handlers ended: settle by how they ran, unless shutdown gave up on the event meanwhile. */
  ran(ran: Ran): Awaitable<Settlement> {
    // Given up by shutdown while the handlers ran: the claim was released then.
    if (this.#state !== 'running') return ABANDONED;
    this.#state = 'settling';
    const settling = ran.ok ? this.#complete(ran.committed) : this.#fail(ran.reason, ran.cause);
    // A completion the store answered at once settled already: nothing is left for an abandon to wait for.
    if (isThenable(settling)) this.#settling = Promise.resolve(settling);
    return settling;
  }

  /** Shutdown gave up on the event: release the claim so the service's retry runs it, unless it is settling. */
  abandon(): Promise<unknown> {
    if (this.#state === 'settling' && this.#settling) return this.#settling;
    if (this.#state === 'settled') return Promise.resolve();
    this.#state = 'settled';
    return this.#release();
  }

  async #fail(reason: 'handler_failed' | 'store_unavailable', cause: unknown): Promise<Settlement> {
    await this.#release();
    this.#state = 'settled';
    const { eventType } = this.held.context;
    const message =
      reason === 'handler_failed'
        ? `A handler for ${eventType} failed; the claim was released so the service's retry runs it again.`
        : `The dedupe store failed while running ${eventType} in its transaction; the claim was released.`;
    await this.claims.report(reason, message, cause, this.held.context);
    return { status: 'failed', reason };
  }

  /** Synchronous with a store that answers at once (the memory store): no promise on the common path. */
  #complete(committed: boolean): Awaitable<Settlement> {
    const { calls, retentionMs, leases } = this.claims;
    const { key, token } = this.held;
    leases.drop(this.#lease);
    this.#state = 'settled';
    if (committed) return COMPLETED;
    // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only means the
    // lease expires and a later retry may run the event again (at-least-once).
    const completing = calls.complete(key, token, retentionMs);
    if (!isThenable(completing)) return completing ? COMPLETED : this.#lost();
    return Promise.resolve(completing).then(
      (owned) => (owned ? COMPLETED : this.#lost()),
      // A completion the replicas asked for (waitForReplicas) do not hold is never acknowledged.
      (cause: unknown) =>
        cause instanceof ReplicasBehindError && !cause.accepted
          ? this.#unreplicated(cause)
          : this.#unrecorded(cause),
    );
  }

  async #lost(): Promise<Settlement> {
    const { context } = this.held;
    await this.claims.report(
      'lease_lost',
      `The claim of ${context.eventType} was taken over before it completed; a retry may run it again.`,
      undefined,
      context,
    );
    return COMPLETED;
  }

  async #unreplicated(cause: unknown): Promise<Settlement> {
    // A completion that landed is not owned by the token any more: only a claim it never reached is dropped.
    await this.#release();
    await this.claims.report(
      'store_unavailable',
      'The completion of an event is not on enough replicas; it is answered 503 not_replicated until they hold it.',
      cause,
      this.held.context,
    );
    return { status: 'failed', reason: 'not_replicated' };
  }

  async #unrecorded(cause: unknown): Promise<Settlement> {
    await this.claims.report(
      'store_unavailable',
      'The dedupe store failed to record a completed event.',
      cause,
      this.held.context,
    );
    return COMPLETED;
  }

  async #release(): Promise<void> {
    this.claims.leases.drop(this.#lease);
    try {
      await this.claims.calls.release(this.held.key, this.held.token);
    } catch (cause) {
      // The lease expires by itself; until then a retry answers 409 event_in_progress.
      await this.claims.report(
        'store_unavailable',
        'The dedupe store failed to release a claim; a retry is answered event_in_progress until its lease ends.',
        cause,
        this.held.context,
      );
    }
  }
}
