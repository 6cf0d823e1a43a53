import { nextRequestId, type SignedPiece } from '../base/bytes.js';
import { WebhookHandlerError } from '../base/errors.js';
import { type Outcome, rejectedOutcome } from '../contract/outcome.js';
import type { ReceiveRequest } from '../contract/request.js';
import type { CryptoProvider } from '../crypto/provider.js';
import type { CatalogueEvent } from '../events/catalogue.js';
import {
  type Catalogue,
  createEventParser,
  type DefaultEvents,
  type EventType,
} from '../events/catalogue.js';
import { MetricsRecorder, type MetricsSnapshot } from '../observability/metrics.js';
import { createRequestObserver } from '../observability/request-observer.js';
import { Claims, type Report } from '../pipeline/6-claim.js';
import { Executor } from '../pipeline/7-execute.js';
import type { Delivery } from '../pipeline/delivery.js';
import { createPipeline } from '../pipeline/index.js';
import { createVerifier } from '../signature/index.js';
import { isModeMap, type Mode } from '../signature/secrets.js';
import type { MemoryDedupeStore } from '../stores/memory.js';
import type { DedupeStore, StoreTx } from '../stores/types.js';
import {
  type AnyEventHandler,
  type ErrorContext,
  type ErrorHandler,
  type EventHandler,
  type HandlerContext,
  HandlerRegistry,
  type RejectionHandler,
} from './handlers.js';
import { type ReceiverOptions, resolveOptions } from './options.js';

export interface Receiver<C extends Catalogue = DefaultEvents, Tx = undefined> {
  /** Handle one event type; `event` is typed from the catalogue entry of that type. */
  on<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): this;
  off<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): this;
  /** Every verified event, including types the catalogue does not know (typed as UnknownEvent). */
  onAny(handler: AnyEventHandler<C, Tx>): this;
  /**
   * Failures on this side, each with its reason code and its cause's text in the message: handler errors
   * (500 handler_failed), store errors (503 store_unavailable), a parsed body (500 body_already_parsed), and
   * failures that change no answer (lease_lost, wait_until_failed, a store error after the answer). Not the
   * 4xx answers (see onRejected), nor the 503s that are no failure (overloaded, shutting_down, handler_timeout).
   */
  onError(handler: ErrorHandler): this;
  /**
   * Every 4xx answer (the sender's problem: signature, body, headers; or 409 event_in_progress), with the
   * message the sender got and redacted diagnostics. Nothing was processed.
   */
  onRejected(handler: RejectionHandler): this;
  /** The whole pipeline: request checks, verify, parse, claim, dispatch, settle. Never rejects. */
  receive(request: ReceiveRequest): Promise<Outcome>;
  /**
   * Runs the registered handlers for an event that was already verified and parsed (a durable worker's job).
   * Rejects with the handler's error, or an AggregateError holding each failure when several handlers failed.
   */
  dispatch(event: { type: string; id?: string }, ctx: HandlerContext<Tx>): Promise<void>;
  /** Tells every onError handler; never rejects. */
  reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void>;
  /**
   * New requests get 503 shutting_down; waits for verified requests and their handlers (a body still uploading
   * is not waited for). After `timeoutMs` the claims of events not finished are released (the service's retry
   * runs them) and their requests answered 503 shutting_down. Calling it again returns the same promise.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
  /** Counters and duration histogram per outcome and event type since creation, and the queue right now. */
  metrics(): MetricsSnapshot;
  /** Settings adapters need (to stop reading a body past the limit while it streams in). */
  readonly limits: { readonly maxBodyBytes: number };
}

/**
 * Creates a receiver: mount it with an adapter (messaging-webhooks/express, /fastify, /next, /fetch, /node)
 * or call receive() with the raw body yourself.
 */
export function createReceiver<
  C extends Catalogue = DefaultEvents,
  S extends DedupeStore<unknown> = MemoryDedupeStore,
>(options: ReceiverOptions<C, S>): Receiver<C, StoreTx<S>> {
  type Tx = StoreTx<S>;
  const opts = resolveOptions(options);
  const verifier = createVerifier({
    secrets: opts.secrets,
    toleranceSeconds: opts.toleranceSeconds,
    profile: opts.profile,
    crypto: opts.crypto,
  });
  // The first failure told to onError while its request is being answered: its log line carries the text.
  const failures = new Map<string, string | undefined>();
  const registry = new HandlerRegistry<C, Tx>((error, ctx) => {
    if (failures.has(ctx.requestId))
      failures.set(ctx.requestId, failures.get(ctx.requestId) ?? error.message);
  });
  const report: Report = (code, message, cause, context) =>
    registry.reportError(
      new WebhookHandlerError(code, message, cause === undefined ? undefined : { cause }),
      {
        ...context,
        reason: code,
      },
    );
  const executor = new Executor({ concurrency: opts.concurrency, maxQueue: opts.maxQueue });
  const admission = createAdmission();
  const pipeline = createPipeline<Tx>({
    ...opts,
    check: (input, now) => verifier.verify(input, now),
    explainSignature: (reason, request) => verifier.profile.explain(reason, request),
    parseEvent: createEventParser(opts.events),
    dedupeKey: (mode, event, request) =>
      typeof event.id === 'string'
        ? `${mode}:${event.id}`
        : signedContentKey(verifier.crypto, mode, verifier.signedBody(request)),
    registry: registry as unknown as HandlerRegistry<never, Tx>,
    claims: new Claims<Tx>({
      store: opts.store as unknown as DedupeStore<Tx>,
      leaseMs: opts.leaseMs,
      retentionMs: opts.retentionMs,
      report,
    }),
    executor,
    report,
    admission,
  });
  const metrics = new MetricsRecorder();
  // A single secret or list names no mode: its secrets are `secrets[0]`…, not `live[0]`, in diagnostics.
  const modes = options.secrets !== undefined && isModeMap(options.secrets);
  const secretLabels = modes ? verifier.secretLabels : verifier.secretLabels.map((_, i) => `secrets[${i}]`);
  const observe = createRequestObserver({
    logger: opts.logger,
    metrics,
    now: opts.now,
    modes,
    rejections: registry,
    diagnostics: { profile: verifier.profile, crypto: verifier.crypto, secretLabels },
  });
  let closed: Promise<void> | undefined;

  const receiver: Receiver<C, Tx> = {
    on(type, handler) {
      registry.on(type, handler);
      return receiver;
    },
    off(type, handler) {
      registry.off(type, handler);
      return receiver;
    },
    onAny(handler) {
      registry.onAny(handler);
      return receiver;
    },
    onError(handler) {
      registry.onError(handler);
      return receiver;
    },
    onRejected(handler) {
      registry.onRejected(handler);
      return receiver;
    },
    async receive(request) {
      const started = performance.now();
      const delivery: Delivery = { request, requestId: request?.requestId ?? nextRequestId() };
      failures.set(delivery.requestId, undefined);
      let outcome: Outcome;
      try {
        outcome = await pipeline(delivery);
      } catch (cause) {
        // Only a bug can get here (every expected failure is an outcome); still never crash the server.
        await report('handler_failed', 'Unexpected receiver error.', cause, {
          requestId: delivery.requestId,
          reason: 'handler_failed',
        });
        outcome = rejectedOutcome('handler_failed', delivery.requestId);
      }
      const failure = failures.get(delivery.requestId);
      failures.delete(delivery.requestId);
      const logged = observe(outcome, request, delivery, performance.now() - started, failure);
      if (logged) await logged;
      return outcome;
    },
    dispatch(event, ctx) {
      return registry.dispatch(event, ctx);
    },
    reportError(error, ctx) {
      return registry.reportError(error, ctx);
    },
    close(closeOptions = {}) {
      admission.closing = true;
      closed ??= executor.drain(closeOptions.timeoutMs).then(() => admission.settled());
      return closed;
    },
    metrics() {
      return metrics.snapshot(
        { running: executor.running, waiting: executor.waiting },
        opts.queue && (opts.queue.counts?.() ?? { ...NOT_READ }),
      );
    },
    limits: { maxBodyBytes: opts.maxBodyBytes },
  };
  return receiver;
}

/** Durable queue counts before the engine was first read. */
const NOT_READ = { waiting: 0, running: 0, retrying: 0, deadLettered: 0, readAt: 0 };

/**
 * The dedupe key of an event without an id: the SHA-256 of what the sender signed, per mode. Not of the raw
 * body: a body signature's member can be re-spelled (hex case, its place, a repeated v1) without changing what
 * was signed, and each spelling would otherwise run the handlers again.
 */
function signedContentKey(crypto: CryptoProvider, mode: Mode, body: SignedPiece): string | Promise<string> {
  if (crypto.sync) return `${mode}:sha256:${crypto.sha256Hex(body)}`;
  return crypto.sha256Hex(body).then((hash) => `${mode}:sha256:${hash}`);
}

/** Counts verified requests not answered yet, so that close() resolves only after their answers. */
function createAdmission() {
  let inside = 0;
  let idle: (() => void) | undefined;
  return {
    closing: false,
    enter() {
      inside++;
    },
    leave() {
      inside--;
      if (inside === 0) idle?.();
    },
    settled(): Promise<void> {
      if (inside === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
  };
}
