import {
  byteLength,
  digestLength,
  hasSyncCrypto,
  nextRequestId,
  sha256Hex,
  utf8Text,
} from './crypto-backend.js';
import { RawBodyError, type ReasonCode, WebhookHandlerError } from './errors.js';
import type { CatalogueEvent } from './events.js';
import { type Catalogue, createEventParser, type DefaultEvents, type EventType } from './events.js';
import {
  type AnyEventHandler,
  type ErrorContext,
  type ErrorHandler,
  type EventHandler,
  HandlerRegistry,
} from './handlers.js';
import { MetricsRecorder, type MetricsSnapshot } from './observability/metrics.js';
import { createRequestObserver, type RequestTrace } from './observability/request-observer.js';
import { type ReceiverOptions, resolveOptions } from './options.js';
import { acceptedOutcome, type Outcome, type RejectionDetails, rejectedOutcome } from './outcome.js';
import { Processor, type Settlement, TIMED_OUT, withTimeout } from './processing.js';
import { BODY_TOO_LARGE, getHeader, isJsonContentType, type ReceiveRequest } from './request.js';
import { createVerifier, defaultScheme } from './signature.js';
import type { MemoryDedupeStore } from './stores/memory.js';
import type { DedupeStore, StoreTx } from './stores/types.js';

export interface Receiver<C extends Catalogue = DefaultEvents, Tx = undefined> {
  /** Handle one event type; `event` is typed from the catalogue entry of that type. */
  on<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): this;
  off<K extends EventType<C>>(type: K, handler: EventHandler<CatalogueEvent<C, K>, Tx>): this;
  /** Every verified event, including types the catalogue does not know (typed as UnknownEvent). */
  onAny(handler: AnyEventHandler<C, Tx>): this;
  /** Failures the client is not told the details of: handler errors, store errors, parsed bodies. */
  onError(handler: ErrorHandler): this;
  /** The whole pipeline: request checks, verify, parse, claim, dispatch, settle. Never rejects. */
  receive(request: ReceiveRequest): Promise<Outcome>;
  /**
   * New requests get 503 shutting_down; waits for admitted requests and handlers. After `timeoutMs` the
   * claims of events not finished are released (the service's retry runs them) and their requests answered
   * 503 shutting_down. Calling it again returns the same promise.
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
  const verifier = createVerifier(opts);
  const parseEvent = createEventParser(opts.events);
  const registry = new HandlerRegistry<C, Tx>();
  const processor = new Processor<C, Tx>(registry, {
    store: opts.store as unknown as DedupeStore<Tx>,
    retentionMs: opts.retentionMs,
    concurrency: opts.concurrency,
    maxQueue: opts.maxQueue,
  });
  const metrics = new MetricsRecorder();
  const observe = createRequestObserver({
    logger: opts.logger,
    metrics,
    now: opts.now,
    diagnostics: {
      signatureHeader: opts.signatureHeader,
      digestLength: digestLength[(opts.scheme ?? defaultScheme).hash],
      secretLabels: verifier.secretLabels,
    },
  });
  const retryAfter = { retryAfterSeconds: opts.retryAfterSeconds };
  let closed: Promise<void> | undefined;

  async function receive(request: ReceiveRequest, requestId: string, trace: RequestTrace): Promise<Outcome> {
    const reject = (reason: ReasonCode, details?: RejectionDetails) =>
      rejectedOutcome(reason, requestId, details);
    if (typeof request?.method !== 'string' || request.method.toUpperCase() !== 'POST') {
      return reject('method_not_allowed', { headers: { allow: 'POST' } });
    }
    if (!isJsonContentType(getHeader(request.headers, 'content-type')))
      return reject('unsupported_media_type');
    let body: unknown;
    try {
      body = request.readBody ? await request.readBody(opts.maxBodyBytes) : request.rawBody;
    } catch {
      return reject('request_aborted');
    }
    if (body === BODY_TOO_LARGE) return reject('payload_too_large');
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
      const error = new RawBodyError(body, request.rawBodyHint);
      await registry.reportError(new WebhookHandlerError('body_already_parsed', error.message), {
        requestId,
        reason: 'body_already_parsed',
      });
      return reject('body_already_parsed', { message: error.message });
    }
    if (byteLength(body) > opts.maxBodyBytes) return reject('payload_too_large');
    trace.body = body;

    const header = getHeader(request.headers, opts.signatureHeader);
    const now = Math.floor(opts.now() / 1000);
    // Where node:crypto exists the HMAC is synchronous: skip the promise hop of the Web Crypto path.
    const verified = hasSyncCrypto
      ? verifier.verify(body, header, now)
      : await verifier.verifyAsync(body, header, now);
    if (!verified.ok) return reject(verified.reason);

    let json: unknown;
    try {
      json = JSON.parse(utf8Text(body));
    } catch {
      return reject('invalid_json');
    }
    const parsed = parseEvent(json);
    if (!parsed.ok) {
      const paths = parsed.issues.map((issue) => issue.path || '(body)').join(', ');
      return reject('invalid_event', {
        message: `The event does not match its schema at: ${paths}.`,
        issues: parsed.issues,
      });
    }
    const { event } = parsed;
    const mode = verified.mode;
    const tag = (outcome: Outcome): Outcome => {
      outcome.event = event.id === undefined ? { type: event.type } : { id: event.id, type: event.type };
      outcome.mode = mode;
      return outcome;
    };
    const dedupeKey = `${mode}:${typeof event.id === 'string' ? event.id : `sha256:${await sha256Hex(body)}`}`;
    const errorContext: ErrorContext = { requestId, reason: 'handler_failed', eventType: event.type, mode };
    if (event.id !== undefined) errorContext.eventId = event.id;

    // Before claiming: a retry of an event turned away here finds it unclaimed.
    if (!processor.reserve()) return tag(reject('overloaded', retryAfter));
    let claim: Awaited<ReturnType<DedupeStore['claim']>>;
    try {
      claim = await opts.store.claim(dedupeKey, opts.leaseMs);
    } catch (cause) {
      processor.unreserve();
      await registry.reportError(
        new WebhookHandlerError('store_unavailable', 'The dedupe store failed to claim an event.', { cause }),
        { ...errorContext, reason: 'store_unavailable' },
      );
      return tag(reject('store_unavailable', retryAfter));
    }
    if (claim.status !== 'claimed') {
      processor.unreserve();
      if (claim.status === 'duplicate') return tag(acceptedOutcome(requestId, 200, true));
      return tag(
        reject('event_in_progress', { retryAfterSeconds: Math.max(1, Math.ceil(claim.retryAfterMs / 1000)) }),
      );
    }

    const ctx = { requestId, mode, timestamp: verified.timestamp, dedupeKey, tx: undefined as Tx };
    const work = processor.process({ event, ctx, token: claim.token, errorContext });
    if (opts.ack === 'async') {
      await keepAlive(request.waitUntil ?? opts.waitUntil, work, errorContext);
      return tag(acceptedOutcome(requestId, 202));
    }
    const settled =
      opts.handlerTimeoutMs === undefined ? await work : await withTimeout(work, opts.handlerTimeoutMs);
    return tag(settlementOutcome(settled, reject, requestId, retryAfter));
  }

  /** Hands async work to the platform (waitUntil); the event is already queued, so a throwing hook only gets reported. */
  async function keepAlive(
    waitUntil: ((work: Promise<unknown>) => void) | undefined,
    work: Promise<Settlement>,
    errorContext: ErrorContext,
  ): Promise<void> {
    if (!waitUntil) return;
    try {
      waitUntil(work);
    } catch (cause) {
      await registry.reportError(
        new WebhookHandlerError(
          'handler_failed',
          'waitUntil threw; the event is processed in this process anyway.',
          {
            cause,
          },
        ),
        errorContext,
      );
    }
  }

  async function guardedReceive(
    request: ReceiveRequest,
    requestId: string,
    trace: RequestTrace,
  ): Promise<Outcome> {
    if (closed) return rejectedOutcome('shutting_down', requestId, retryAfter);
    processor.enter();
    try {
      return await receive(request, requestId, trace);
    } catch (cause) {
      // Only a bug can get here (every expected failure is an outcome); still never crash the server.
      await registry.reportError(
        new WebhookHandlerError('handler_failed', 'Unexpected receiver error.', { cause }),
        {
          requestId,
          reason: 'handler_failed',
        },
      );
      return rejectedOutcome('handler_failed', requestId);
    } finally {
      processor.leave();
    }
  }

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
    async receive(request) {
      const started = performance.now();
      const trace: RequestTrace = { body: undefined };
      const outcome = await guardedReceive(request, request?.requestId ?? nextRequestId(), trace);
      const logged = observe(outcome, request, trace, performance.now() - started);
      if (logged) await logged;
      return outcome;
    },
    close(closeOptions = {}) {
      closed ??= processor.drain(closeOptions.timeoutMs);
      return closed;
    },
    metrics() {
      return metrics.snapshot({ running: processor.running, waiting: processor.waiting });
    },
    limits: { maxBodyBytes: opts.maxBodyBytes },
  };
  return receiver;
}

function settlementOutcome(
  settled: Settlement | typeof TIMED_OUT,
  reject: (reason: ReasonCode, details?: RejectionDetails) => Outcome,
  requestId: string,
  retryAfter: RejectionDetails,
): Outcome {
  if (settled === TIMED_OUT) return reject('handler_timeout', retryAfter);
  switch (settled.status) {
    case 'completed':
      return acceptedOutcome(requestId, 200);
    case 'abandoned':
      return reject('shutting_down', retryAfter);
    case 'failed':
      return settled.reason === 'handler_failed'
        ? reject('handler_failed')
        : reject(settled.reason, retryAfter);
  }
}
