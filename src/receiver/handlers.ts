import type { ErrorCode, WebhookHandlerError } from '../base/errors.js';
import type { RejectionReason } from '../contract/reasons.js';
import type { Catalogue, CatalogueEvent, EventType, KnownEvent, UnknownEvent } from '../events/catalogue.js';
import type { RejectionDiagnostics } from '../observability/diagnostics.js';
import type { Mode } from '../signature/secrets.js';

/** What a handler knows about the delivery besides the event itself. */
export interface HandlerContext<Tx = undefined> {
  requestId: string;
  /**
   * Mode of the secret that verified the signature, with `secrets: { live, test }`. A single secret or list
   * names no mode: it counts as `live` here (and in the dedupe key), whatever the service signed with; pass
   * `{ live, test }` when handlers must tell test traffic apart. Logs and onRejected leave the mode out then.
   */
  mode: Mode;
  /** The signature's timestamp (unix seconds): when the service sent this attempt. */
  timestamp: number;
  /** The key this event is deduplicated under: `<mode>:<event id>`, or `<mode>:sha256:<hash of the signed body>` (for a body signature, the body without its member). */
  dedupeKey: string;
  /** The delivery's message id, for a profile that signs one (Standard Webhooks: `webhook-id`). */
  messageId?: string;
  /** Durable workers: which run of the job this is, from 1. Undefined when the receiver runs the handler. */
  attempt?: number;
  /** The store's unit of work (PostgreSQL transactional mode: the transaction's client), else undefined. */
  tx: Tx;
}

export interface ErrorContext {
  requestId: string;
  /** The same code as the error's. */
  reason: ErrorCode;
  eventId?: string;
  eventType?: string;
  mode?: Mode;
  /** Durable workers: the run of the job that failed (from 1), and the runs the job was allowed. */
  attempt?: number;
  attempts?: number;
}

/** A request answered 4xx: turned away before its event was processed, so no error on this side. */
export interface WebhookRejection {
  requestId: string;
  reason: RejectionReason;
  /** 400, 401, 405, 408, 409, 413, 415 or 422. */
  status: number;
  /** The message the sender was answered with: what to fix. */
  message: string;
  /** Set once the event was parsed (invalid_event does not parse it into one). */
  eventId?: string;
  eventType?: string;
  /** Set when the signature verified and the secrets option separates live and test. */
  mode?: Mode;
  /** Redacted facts to tell a wrong secret, a skewed clock or a re-serialized body apart. */
  diagnostics?: RejectionDiagnostics;
}

export type RejectionHandler = (rejection: WebhookRejection) => unknown;

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
  readonly #onRejected: RejectionHandler[] = [];

  /** `noted` sees every error before the onError handlers do (the request log line names it). */
  constructor(private readonly noted?: ErrorHandler) {}

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

  /**
   * dispatch, but undefined when every handler returned without a promise and none threw: the pipeline then
   * settles the claim at once, where a resolved promise would cost a turn of the microtask queue per request.
   */
  dispatchNow(event: { type: string }, ctx: HandlerContext<Tx>): Promise<void> | undefined {
    const typed = this.#byType.get(event.type);
    const count = (typed?.length ?? 0) + this.#any.length;
    if (count === 0) return undefined;
    if (count === 1) return runOne((typed?.[0] ?? this.#any[0]) as StoredHandler, event, ctx);
    const runs: (Promise<void> | undefined)[] = [];
    for (const handler of typed ?? []) runs.push(runOne(handler, event, ctx));
    for (const handler of this.#any) runs.push(runOne(handler, event, ctx));
    if (runs.every((run) => run === undefined)) return undefined;
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

async function tell(handler: () => unknown): Promise<void> {
  try {
    await handler();
  } catch {
    // A hook that fails has nobody left to tell; the outcome is already decided.
  }
}

/**
 * Calls one handler; a synchronous throw becomes a rejection. A handler that returns no promise costs no
 * promise: undefined.
 */
function runOne(handler: StoredHandler, event: unknown, ctx: unknown): Promise<void> | undefined {
  try {
    const result = (handler as (e: unknown, c: unknown) => unknown)(event, ctx);
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') return undefined;
    return Promise.resolve(result).then(noop);
  } catch (error) {
    return Promise.reject(error);
  }
}

function noop(): void {}

function throwFailures(results: PromiseSettledResult<void>[]): void {
  const errors: unknown[] = [];
  for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} handlers of one event failed.`);
}
