import type { ReasonCode, WebhookHandlerError } from './errors.js';
import type { Catalogue, CatalogueEvent, EventType, KnownEvent, UnknownEvent } from './events.js';
import type { Mode } from './secrets.js';

/** What a handler knows about the delivery besides the event itself. */
export interface HandlerContext<Tx = undefined> {
  requestId: string;
  /** Mode of the secret that verified the signature. */
  mode: Mode;
  /** The signature's timestamp (unix seconds): when the service sent this attempt. */
  timestamp: number;
  /** The key this event is deduplicated under: `<mode>:<event id>` or `<mode>:sha256:<body hash>`. */
  dedupeKey: string;
  /** The store's unit of work (PostgreSQL transactional mode: the transaction's client), else undefined. */
  tx: Tx;
}

export interface ErrorContext {
  requestId: string;
  reason: ReasonCode;
  eventId?: string;
  eventType?: string;
  mode?: Mode;
}

export type EventHandler<E, Tx = undefined> = (event: E, ctx: HandlerContext<Tx>) => unknown;
export type AnyEventHandler<C extends Catalogue, Tx = undefined> = EventHandler<
  KnownEvent<C> | UnknownEvent,
  Tx
>;
export type ErrorHandler = (error: WebhookHandlerError, ctx: ErrorContext) => unknown;

type StoredHandler = (event: never, ctx: HandlerContext<never>) => unknown;

/** Handlers keyed by event type; onAny handlers see every verified event, catalogued or not. */
export class HandlerRegistry<C extends Catalogue, Tx> {
  readonly #byType = new Map<string, StoredHandler[]>();
  readonly #any: StoredHandler[] = [];
  readonly #onError: ErrorHandler[] = [];

  on<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): void {
    const list = this.#byType.get(type);
    if (list) list.push(handler as StoredHandler);
    else this.#byType.set(type, [handler as StoredHandler]);
  }

  off<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): void {
    const list = this.#byType.get(type);
    const index = list?.indexOf(handler as StoredHandler) ?? -1;
    if (list && index !== -1) list.splice(index, 1);
  }

  onAny(handler: AnyEventHandler<C, Tx>): void {
    this.#any.push(handler as StoredHandler);
  }

  onError(handler: ErrorHandler): void {
    this.#onError.push(handler);
  }

  /**
   * Runs every handler of the event; resolves when all of them settled, rejects with the first failure.
   * All handlers are awaited even when one fails, so none is still running when the claim is released.
   */
  async dispatch(event: { type: string }, ctx: HandlerContext<Tx>): Promise<void> {
    const typed = this.#byType.get(event.type);
    const count = (typed?.length ?? 0) + this.#any.length;
    if (count === 0) return;
    const call = (handler: StoredHandler) => (handler as (e: unknown, c: unknown) => unknown)(event, ctx);
    if (count === 1) {
      await call((typed?.[0] ?? this.#any[0]) as StoredHandler);
      return;
    }
    const runs: unknown[] = [];
    for (const handler of typed ?? []) runs.push(attempt(call, handler));
    for (const handler of this.#any) runs.push(attempt(call, handler));
    const results = await Promise.allSettled(runs);
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }

  /** Tells every onError handler; a throwing onError handler never breaks the pipeline. */
  async reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void> {
    for (const handler of this.#onError) {
      try {
        await handler(error, ctx);
      } catch {
        // An error handler that fails has nobody left to tell; the outcome is already decided.
      }
    }
  }
}

/** Turns a synchronous throw into a rejection so that allSettled sees it. */
async function attempt(call: (handler: StoredHandler) => unknown, handler: StoredHandler): Promise<unknown> {
  return call(handler);
}
