import { callUser, isThenable, withTimeout } from '../base/deadline.js';
import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { WebhookHandlerError } from '../contract/errors.js';
import type {
  Catalogue,
  CatalogueEvent,
  DefaultEvents,
  EventType,
  KnownEvent,
  UnknownEvent,
} from '../events/catalogue.js';
import type { WebhookRejection } from '../observability/diagnostics.js';
import { trackHandled } from '../tracker/receiving.js';
import type { MessageTracker } from '../tracker/tracker.js';

export type { ErrorContext, HandlerContext, WebhookRejection };

export type RejectionHandler = (rejection: WebhookRejection) => unknown;

export type EventHandler<E, Tx = undefined> = (event: E, ctx: HandlerContext<Tx>) => unknown;
export type AnyEventHandler<C extends Catalogue, Tx = undefined> = EventHandler<
  KnownEvent<C> | UnknownEvent,
  Tx
>;
/** An event type of the built-in catalogue, for an adapter that registers handlers by type (a decorator). */
export type DefaultEventType = EventType<DefaultEvents>;
/** A handler of the built-in catalogue's events of type K, on a receiver of any store. */
export type DefaultEventHandler<K extends DefaultEventType> = EventHandler<
  CatalogueEvent<DefaultEvents, K>,
  // biome-ignore lint/suspicious/noExplicitAny: the store's transaction type is the app's
  any
>;
export type ErrorHandler = (error: WebhookHandlerError, ctx: ErrorContext) => unknown;

type StoredHandler = (event: never, ctx: HandlerContext<never>) => unknown;

/** Handlers keyed by event type; onAny handlers see every verified event, catalogued or not. */
export class HandlerRegistry<C extends Catalogue, Tx> {
  readonly #byType = new Map<string, StoredHandler[]>();
  readonly #any: StoredHandler[] = [];
  readonly #onError: ErrorHandler[] = [];
  readonly #onRejected: RejectionHandler[] = [];

  /**
   * `noted` sees every error before the onError handlers do (the request log line names it); `tracker` gets
   * each `message.*` event once its handlers succeeded.
   */
  constructor(
    private readonly noted?: ErrorHandler,
    tracker?: MessageTracker,
  ) {
    trackHandled(this, tracker);
  }

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

  onRejected(handler: RejectionHandler): void {
    this.#onRejected.push(handler);
  }

  get listensForErrors(): boolean {
    return this.#onError.length > 0;
  }

  /** Rejections are only described (diagnostics) when someone listens. */
  get listensForRejections(): boolean {
    return this.#onRejected.length > 0;
  }

  /**
   * Runs every handler of the event; resolves when all of them settled. One failure rejects with its error,
   * several with an AggregateError holding every one of them. All handlers are awaited even when one fails, so
   * none is still running when the claim is released.
   */
  dispatch(event: { type: string }, ctx: HandlerContext<Tx>): Promise<void> {
    return this.dispatchNow(event, ctx) ?? DONE;
  }

  /** dispatch, but undefined when the event has no handler: nothing ran. */
  dispatchNow(event: { type: string }, ctx: HandlerContext<Tx>): Promise<void> | undefined {
    const typed = this.#byType.get(event.type);
    const count = (typed?.length ?? 0) + this.#any.length;
    if (count === 0) return undefined;
    if (count === 1) return runOne((typed?.[0] ?? this.#any[0]) as StoredHandler, event, ctx);
    const runs: (Promise<void> | undefined)[] = [];
    for (const handler of typed ?? []) runs.push(runOne(handler, event, ctx));
    for (const handler of this.#any) runs.push(runOne(handler, event, ctx));
    return Promise.allSettled(runs).then(throwFailures);
  }

  /** Tells every onError handler; a throwing onError handler never breaks the pipeline. */
  async reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void> {
    this.noted?.(error, ctx);
    for (const handler of this.#onError) await tell(() => handler(error, ctx));
  }

  /** Tells every onRejected handler; a throwing one never changes the answer. */
  async reportRejection(rejection: WebhookRejection): Promise<void> {
    for (const handler of this.#onRejected) await tell(() => handler(rejection));
  }
}

const DONE: Promise<void> = Promise.resolve();

/** How long an onError or onRejected hook may hold a request's answer: past it, the answer goes out anyway. */
export const HOOK_TIMEOUT_MS = 5000;

async function tell(handler: () => unknown): Promise<void> {
  try {
    const told = callUser(handler);
    if (isThenable(told)) await withTimeout(Promise.resolve(told), HOOK_TIMEOUT_MS);
  } catch {
    // A hook that fails has nobody left to tell; the outcome is already decided.
  }
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
