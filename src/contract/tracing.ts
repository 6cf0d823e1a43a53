import { WebhookConfigError } from '../base/errors.js';
import type { HeaderSource } from './request.js';

/**
 * The tracing port: what the receiver and the durable workers tell a tracer, in terms of no tracing library.
 * messaging-webhooks/opentelemetry implements it on @opentelemetry/api; the core never loads that package, so an
 * app without it loads every entry. Without a `tracing` option nothing of this runs.
 */
export interface Tracing {
  /**
   * The SERVER span of one delivery, continuing the trace its request names (a `traceparent` header) if any.
   * Called before a byte of the body is read. Undefined when the span would neither record nor carry a trace
   * context anywhere (no tracer provider): the delivery then walks as if untraced.
   */
  startDelivery(request: DeliveryStart): TraceSpan | undefined;
  /**
   * The CONSUMER span of one attempt of a durable job: a child of the context the handoff wrote into the job
   * (`parent`), linked to the spans of the job's earlier attempts (`links`).
   */
  startJob(job: JobStart): TraceSpan;
}

/** What a delivery's span is started from: the request as the adapter gave it, never its body. */
export interface DeliveryStart {
  /** The request's method, as the adapter gave it. */
  method: string;
  /** Read for the trace context (`traceparent`) and the HTTP attributes; never the signature's headers. */
  headers: HeaderSource;
  /** The request target as received: a path (`/webhooks?x=1`) or an absolute URL. */
  url?: string | undefined;
  /** The route template the framework matched (`/webhooks`), when it names one. */
  route?: string | undefined;
}

/** What the span of one attempt of a durable job is started from. */
export interface JobStart {
  /** The span's name. */
  name: string;
  /** The handoff span's context, from the job's data; undefined for a job enqueued without tracing. */
  parent: TraceCarrier | undefined;
  /** The span contexts of the job's earlier attempts, oldest first. */
  links: readonly TraceCarrier[];
  /** Set when the span starts, so a sampler sees them. */
  attributes: TraceAttributes;
}

/** Attribute values every tracing system stores; an undefined value is left out. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** A span's context written out as text (W3C: `traceparent`, `tracestate`): what a durable job carries. */
export type TraceCarrier = Record<string, string>;

/** One span, as the pipeline drives it. */
export interface TraceSpan {
  /**
   * False for a span the sampler dropped: the receiver then reads nothing to record on it (its answer's
   * attributes are not even gathered). Absent means recording.
   */
  readonly recording?: boolean;
  /** Adds attributes (an undefined value is left out). */
  setAttributes(attributes: TraceAttributes): void;
  /** A span under this one: `internal` (verify, claim, handler) or `producer` (the handoff to a job engine). */
  child(name: string, kind?: 'internal' | 'producer'): TraceSpan;
  /** Runs `fn` with this span active, so spans its code starts (a handler's own) nest under it. */
  inContext<T>(fn: () => T): T;
  /** This span's context as a carrier, for a job's data. */
  carrier(): TraceCarrier;
  /**
   * Marks the span failed: `description` is a reason code; `error`, when given, is recorded as an exception
   * event (its type and message).
   */
  fail(description: string, error?: unknown): void;
  /** Ends the span; nothing is added to it after. */
  end(): void;
}

/** The `tracing` option of the receiver and of the workers, checked when they are created. */
export function checkTracing(tracing: unknown): Tracing | undefined {
  if (tracing === undefined) return undefined;
  const port = tracing as Partial<Tracing> | null;
  if (typeof port?.startDelivery !== 'function' || typeof port.startJob !== 'function') {
    throw new WebhookConfigError(
      "tracing must be a Tracing: openTelemetry() from 'messaging-webhooks/opentelemetry', got " +
        `${port === null ? 'null' : typeof port}.`,
    );
  }
  return port as Tracing;
}

/** The attribute names this package's own spans use besides the OpenTelemetry semantic conventions. */
export const TRACE_ATTRIBUTE = {
  requestId: 'messaging_webhooks.request_id',
  eventType: 'messaging_webhooks.event.type',
  eventId: 'messaging_webhooks.event.id',
  mode: 'messaging_webhooks.mode',
  tenant: 'messaging_webhooks.tenant',
  ack: 'messaging_webhooks.ack',
  outcome: 'messaging_webhooks.outcome',
  reason: 'messaging_webhooks.reason',
  attempt: 'messaging_webhooks.attempt',
  attempts: 'messaging_webhooks.attempts',
} as const;
