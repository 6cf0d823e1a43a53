import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { Executor } from '../base/executor.js';
import { Claims } from '../claims/claim.js';
import type { Report } from '../claims/report.js';
import { WebhookHandlerError } from '../contract/errors.js';
import type { Outcome } from '../contract/outcome.js';
import type { ReceiveRequest } from '../contract/request.js';
import type { Tracing } from '../contract/tracing.js';
import type { Catalogue, CatalogueEvent, DefaultEvents, EventType } from '../events/catalogue.js';
import { type AckMode, endDeliverySpan } from '../observability/delivery-span.js';
import {
  createRequestObserver,
  exposeListedTenants,
  MetricsRecorder,
  type MetricsSnapshot,
  receiving,
  type Traced,
} from '../observability/metrics.js';
import { unheardRefusals } from '../observability/unheard.js';
import { signatureOf } from '../pipeline/1-read-verify.js';
import { createEventParser } from '../pipeline/3-event.js';
import { type Admission, createAdmission, createPipeline } from '../pipeline/index.js';
import type { Verifier } from '../signature/index.js';
import { isModeMap, type Secrets } from '../signature/secrets.js';
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
import { ignoredModes, type ReceiverOptions, resolveOptions } from './options.js';
import { tenantSecretsOf, verifierOf } from './verifiers.js';

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
  /**
   * With a `secrets` lookup: drops what is cached of this tenant (its secrets, or that it is unknown), so the
   * next delivery looks it up again. Call it when a tenant's secret changes or a tenant is added.
   */
  forgetSecrets(tenant: string): void;
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
  /**
   * Settings adapters need: the body limit (to stop reading past it while it streams in), and when the sender
   * is answered (a platform that freezes after the response refuses 'async').
   */
  readonly limits: { readonly maxBodyBytes: number; readonly ack: 'sync' | 'async' | 'durable' };
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
  const verifier = verifierOf(opts);
  // Only a log line prints a request's first failure: without a logger none is kept.
  const failures = opts.logger ? new Map<string, string | undefined>() : undefined;
  const registry = new HandlerRegistry<C, Tx>(failures && noteFirstFailure(failures), opts.tracker);
  // Without a logger, whose line per request carries it, a refusal of the configuration nobody hears is printed.
  const report = reporter(registry, opts.logger ? undefined : unheardRefusals());
  const executor = new Executor({ concurrency: opts.concurrency, maxQueue: opts.maxQueue });
  const admission = createAdmission();
  const tenants = tenantSecretsOf(opts, report);
  const pipeline = createPipeline<Tx>({
    ...opts,
    signature: signatureOf(verifier),
    parseEvent: createEventParser(opts.events),
    signedContent: verifier,
    handlers: registry,
    claims: new Claims<Tx>({ ...opts, store: opts.store as unknown as DedupeStore<Tx>, report }),
    executor,
    report,
    admission,
    tenants,
    ignoring: ignoredModes(opts.modes),
  });
  const metrics = new MetricsRecorder();
  const modes = modesOf(tenants ? { live: [] } : (options.secrets as Secrets), verifier);
  const observe = createRequestObserver({
    logger: opts.logger,
    metrics,
    now: opts.now,
    ...modes,
    rejections: registry,
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
    receive: receiving(pipeline, observe, failures, report, tracedOf(opts, modes.modes)),
    dispatch: (event, ctx) => registry.dispatch(event, ctx),
    reportError: (error, ctx) => registry.reportError(error, ctx),
    forgetSecrets: (tenant) => tenants?.forget(tenant),
    close(closeOptions = {}) {
      admission.closing = true;
      closed ??= closing(executor, admission, closeOptions.timeoutMs);
      return closed;
    },
    metrics() {
      return metrics.snapshot(
        { running: executor.running, waiting: executor.waiting },
        opts.queue && (opts.queue.counts?.() ?? { ...NOT_READ }),
      );
    },
    limits: { maxBodyBytes: opts.maxBodyBytes, ack: opts.queue ? 'durable' : opts.ack },
  };
  exposeListedTenants(receiver, metrics);
  return receiver;
}

/** Durable queue counts before the engine was first read. */
const NOT_READ = { waiting: 0, running: 0, retrying: 0, deadLettered: 0, readAt: 0 };

/** The first failure told to onError while its request is being answered: its log line carries the text. */
function noteFirstFailure(failures: Map<string, string | undefined>): ErrorHandler {
  return (error, ctx) => {
    if (failures.has(ctx.requestId))
      failures.set(ctx.requestId, failures.get(ctx.requestId) ?? error.message);
  };
}

function reporter(
  registry: {
    reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void>;
    listensForErrors: boolean;
  },
  unheard?: ReturnType<typeof unheardRefusals>,
): Report {
  return (code, message, cause, context) => {
    const error = new WebhookHandlerError(code, message, cause === undefined ? undefined : { cause });
    unheard?.(error, cause, registry.listensForErrors);
    return registry.reportError(error, { ...context, reason: code });
  };
}

/** A single secret or list names no mode: its secrets are `secrets[0]`…, not `live[0]`, in diagnostics. */
function modesOf(secrets: Secrets | undefined, verifier: Verifier) {
  const modes = secrets !== undefined && isModeMap(secrets);
  const secretLabels = modes ? verifier.secretLabels : verifier.secretLabels.map((_, i) => `secrets[${i}]`);
  return { modes, diagnostics: { profile: verifier.profile, crypto: verifier.crypto, secretLabels } };
}

function tracedOf(
  opts: { tracing?: Tracing | undefined; queue?: unknown; ack: 'sync' | 'async' },
  modes: boolean,
): Traced | undefined {
  const { tracing } = opts;
  if (tracing === undefined) return undefined;
  const ack: AckMode = opts.queue ? 'durable' : opts.ack;
  return { tracing, end: (span, outcome) => endDeliverySpan(span, outcome, ack, modes) };
}

/**
 * Shutdown: the executor drains (past `timeoutMs` it gives up on what is left), then every admitted request is
 * answered; both within `timeoutMs` when it is given. Without it, every admitted handler settles first, those
 * acknowledged 202 too.
 */
async function closing(
  executor: Executor,
  admission: Admission,
  timeoutMs: number | undefined,
): Promise<void> {
  const started = performance.now();
  await executor.drain(timeoutMs);
  if (timeoutMs === undefined) return admission.settled();
  const left = Math.max(0, timeoutMs - (performance.now() - started));
  if ((await withTimeout(admission.settled(), left)) !== TIMED_OUT) return;
  // Each request still waiting (on a store, on a job engine) is answered 503 shutting_down now.
  admission.giveUp();
  await admission.settled();
  // The adapters write those answers in the turn their receive() resolves: written before close() resolves.
  await new Promise(setImmediate);
}
