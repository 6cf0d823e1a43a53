import PQueue from 'p-queue';
import { WebhookHandlerError } from './errors.js';
import type { Catalogue } from './events.js';
import type { ErrorContext, HandlerContext, HandlerRegistry } from './handlers.js';
import type { DedupeStore } from './stores/types.js';

/** How a claimed event ended: its claim is completed, released, or given up at shutdown. */
export type Settlement =
  | { status: 'completed' }
  | { status: 'failed'; reason: 'handler_failed' | 'store_unavailable' }
  | { status: 'abandoned' };

export interface ClaimedEvent<Tx> {
  event: { type: string; id?: string };
  ctx: HandlerContext<Tx>;
  token: string;
  errorContext: ErrorContext;
}

export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Runs claimed events through a bounded queue and settles each claim exactly once: complete after every
 * handler succeeded, release when one failed, so the service's retry runs the event again.
 */
export class Processor<C extends Catalogue, Tx> {
  readonly queue: PQueue;
  readonly #claims = new Set<ClaimedEvent<Tx>>();
  #cutOff = false;
  #signalCutOff!: (value: Settlement) => void;
  /** Resolves when close() gives up on unfinished work: every waiting response then answers shutting_down. */
  readonly cutOff = new Promise<Settlement>((resolve) => {
    this.#signalCutOff = resolve;
  });

  constructor(
    readonly registry: HandlerRegistry<C, Tx>,
    readonly store: DedupeStore<Tx>,
    readonly retentionMs: number,
    concurrency: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  get waiting(): number {
    return this.queue.size;
  }

  /** Never rejects: failures are reported to onError and returned as a settlement. */
  process(claimed: ClaimedEvent<Tx>): Promise<Settlement> {
    this.#claims.add(claimed);
    return this.queue.add(() => this.#run(claimed)) as Promise<Settlement>;
  }

  async #run(claimed: ClaimedEvent<Tx>): Promise<Settlement> {
    if (this.#cutOff) return { status: 'abandoned' };
    const { event, ctx, token } = claimed;
    const key = ctx.dedupeKey;
    let handlerError: unknown;
    const dispatch = async (tx: Tx) => {
      try {
        await this.registry.dispatch(event, tx === undefined ? ctx : { ...ctx, tx });
      } catch (error) {
        handlerError = error ?? new Error('handler rejected without a reason');
        throw handlerError;
      }
    };
    try {
      if (this.store.transact) {
        await this.store.transact(key, token, this.retentionMs, dispatch);
      } else {
        await dispatch(undefined as Tx);
      }
    } catch (error) {
      this.#claims.delete(claimed);
      const reason = handlerError !== undefined ? 'handler_failed' : 'store_unavailable';
      await this.#release(claimed);
      await this.#report(reason, error, claimed);
      return { status: 'failed', reason };
    }
    this.#claims.delete(claimed);
    if (!this.store.transact) {
      // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only
      // means the lease expires and a later retry may run the event again (at-least-once).
      try {
        const owned = await this.store.complete(key, token, this.retentionMs);
        if (!owned)
          await this.#report('store_unavailable', new Error('claim expired before completion'), claimed);
      } catch (error) {
        await this.#report('store_unavailable', error, claimed);
      }
    }
    return { status: 'completed' };
  }

  /** Stop taking work; after `timeoutMs`, release the claims of unfinished events so retries run them. */
  async drain(timeoutMs: number | undefined): Promise<void> {
    const idle = this.queue.onIdle();
    const result = timeoutMs === undefined ? await idle : await withTimeout(idle, timeoutMs);
    if (result !== TIMED_OUT) return;
    this.#cutOff = true;
    this.#signalCutOff({ status: 'abandoned' });
    const claims = [...this.#claims];
    this.#claims.clear();
    await Promise.all(claims.map((claimed) => this.#release(claimed)));
  }

  async #release(claimed: ClaimedEvent<Tx>): Promise<void> {
    try {
      await this.store.release(claimed.ctx.dedupeKey, claimed.token);
    } catch (error) {
      // The lease expires by itself; until then a retry answers 409 event_in_progress.
      await this.#report('store_unavailable', error, claimed);
    }
  }

  #report(reason: 'handler_failed' | 'store_unavailable', cause: unknown, claimed: ClaimedEvent<Tx>) {
    const message =
      reason === 'handler_failed'
        ? `A handler for ${claimed.event.type} failed; the claim was released so the service's retry runs it again.`
        : `The dedupe store failed while settling ${claimed.event.type}.`;
    return this.registry.reportError(
      new WebhookHandlerError(reason, message, { cause }),
      claimed.errorContext,
    );
  }
}

export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
