import { BoundedLabel, cumulative, observe } from '../base/series.js';
import type { Report } from '../claims/report.js';
import { type Outcome, rejectedOutcome } from '../contract/outcome.js';
import type { ReceiveRequest } from '../contract/request.js';
import type { TraceSpan, Tracing } from '../contract/tracing.js';
import type { DurableQueueCounts } from '../durable/port.js';
import { nextRequestId, type Received } from '../pipeline/1-read-verify.js';
import type { Reached, Walked } from '../pipeline/index.js';
import {
  type DiagnosticsContext,
  type RejectionDiagnostics,
  rejectionDiagnostics,
  type WebhookRejection,
} from './diagnostics.js';
import { answeredMessage, type RequestLogFields, rejection } from './log-line.js';
import { type Logger, requestLogWriter, writeRequestLog } from './logger.js';

/** Upper bounds (seconds) of the request duration histogram; the +Inf bucket is implied. */
export const DURATION_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Event types counted separately; past this many, further types are counted as `other`. */
const MAX_EVENT_TYPES = 64;
const OTHER_EVENT_TYPE = 'other';
/** Verified tenants counted separately; past this many, further tenants are counted as `other`. */
export const MAX_TENANTS = 100;
export const OTHER_TENANT = 'other';
/**
 * Where registerMetrics finds, on a receiver, how to keep the tenants it lists apart from the bound above.
 * `Symbol.for`: the same key whichever copy of this module (one per bundled entry) asks.
 */
export const LISTED_TENANTS: unique symbol = Symbol.for('messaging-webhooks.listed-tenants');
export type ListTenants = (tenants: readonly string[]) => void;

export interface MetricsSeries {
  /** `processed`, `duplicate`, `accepted` or a reason code. */
  outcome: string;
  status: number;
  /** `''` when the request was rejected before its event was parsed. */
  eventType: string;
  /**
   * With the receiver's `tenant` option: the tenant whose secret verified the request (the first 100 tenants
   * seen; later ones are `other`). `''` without a tenant or before verification: an unknown tenant never
   * becomes a series of its own.
   */
  tenant: string;
  count: number;
  durationSecondsSum: number;
  /** Cumulative counts per DURATION_BUCKETS bound, then the +Inf bucket (equal to count). */
  durationBuckets: number[];
}

export interface MetricsSnapshot {
  /** Bounds of durationBuckets, in seconds. */
  bucketBounds: readonly number[];
  series: MetricsSeries[];
  /** Handlers running now, and claimed events waiting for a slot. */
  queue: { running: number; waiting: number };
  /** With a durable queue: its job counts as last read from the engine (all 0 and readAt 0 before the first read). */
  durable?: DurableQueueCounts;
}

interface Series {
  readonly status: number;
  readonly eventType: string;
  readonly tenant: string;
  count: number;
  sum: number;
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly buckets: Float64Array;
}

/** The label logs and metrics share: a reason code, or what happened to an accepted event. */
export function outcomeLabel(outcome: Outcome): string {
  if (outcome.reason !== undefined) return outcome.reason;
  if (outcome.status === 202) return 'accepted';
  if (outcome.ignored) return 'ignored';
  return outcome.duplicate ? 'duplicate' : 'processed';
}

/**
 * Counters and a duration histogram per outcome and event type. Recording a request is two map lookups and
 * a few increments: a series is allocated once, the first time its outcome and event type meet.
 */
export class MetricsRecorder {
  readonly #byOutcome = new Map<string, Map<string, Series>>();
  // Event types come from verified bodies, but a bound keeps a misbehaving sender from growing the map.
  readonly #eventTypes = new BoundedLabel(MAX_EVENT_TYPES, OTHER_EVENT_TYPE);
  readonly #tenants = new BoundedLabel(MAX_TENANTS, OTHER_TENANT);

  record(outcome: Outcome, durationSeconds: number): void {
    const label = outcomeLabel(outcome);
    let byType = this.#byOutcome.get(label);
    if (!byType) {
      byType = new Map();
      this.#byOutcome.set(label, byType);
    }
    const type = outcome.event?.type;
    const eventType = type === undefined ? '' : this.#eventTypes.of(type);
    // Only a verified request's tenant: mode is set once the signature verified.
    const tenant =
      outcome.tenant !== undefined && outcome.mode !== undefined ? this.#tenants.of(outcome.tenant) : '';
    const key = tenant === '' ? eventType : `${eventType}\n${tenant}`;
    let series = byType.get(key);
    if (!series) {
      series = {
        status: outcome.status,
        eventType,
        tenant,
        count: 0,
        sum: 0,
        buckets: new Float64Array(DURATION_BUCKETS.length + 1),
      };
      byType.set(key, series);
    }
    series.count++;
    series.sum += durationSeconds;
    observe(series.buckets, DURATION_BUCKETS, durationSeconds);
  }

  snapshot(queue: MetricsSnapshot['queue'], durable?: DurableQueueCounts): MetricsSnapshot {
    const series: MetricsSeries[] = [];
    for (const [outcome, byType] of this.#byOutcome) {
      for (const { status, eventType, tenant, count, sum, buckets } of byType.values()) {
        const durationBuckets = cumulative(buckets);
        series.push({ outcome, status, eventType, tenant, count, durationSecondsSum: sum, durationBuckets });
      }
    }
    const snapshot: MetricsSnapshot = { bucketBounds: DURATION_BUCKETS, series, queue };
    if (durable) snapshot.durable = durable;
    return snapshot;
  }

  /** Counts these tenants apart from now on, beyond the bound of MAX_TENANTS (which other tenants still have). */
  listTenants(tenants: readonly string[]): void {
    this.#tenants.list(tenants);
  }
}

/** Puts the hook registerMetrics looks for on a receiver, out of its enumerable properties and its type. */
export function exposeListedTenants(receiver: object, recorder: MetricsRecorder): void {
  const listTenants: ListTenants = (tenants) => recorder.listTenants(tenants);
  Object.defineProperty(receiver, LISTED_TENANTS, { value: listTenants });
}

export interface ObserverOptions {
  logger: Logger | undefined;
  metrics: MetricsRecorder;
  diagnostics: DiagnosticsContext;
  /** Clock in milliseconds (the receiver's `now` option), for the clock skew of rejected signatures. */
  now: () => number;
  /** Whether the secrets option separates live and test: a single secret or list says nothing about mode. */
  modes: boolean;
  rejections: { readonly listensForRejections: boolean; reportRejection(r: WebhookRejection): Promise<void> };
}

type Observe = (
  outcome: Outcome,
  /** What the pipeline learned of the request before it was answered. */
  reached: Reached,
  durationMs: number,
  /** The message of the first error told to onError while this request was answered. */
  failure?: string,
) => Promise<void> | undefined;

/**
 * Records every answered request in the metrics, writes its log line and tells onRejected of a 4xx. With no
 * logger and no onRejected nothing is built; diagnostics are computed for 4xx answers only, so an accepted
 * delivery costs a few increments.
 */
export function createRequestObserver(options: ObserverOptions): Observe {
  const { logger, metrics, rejections } = options;
  const write = logger && requestLogWriter(logger);
  return (outcome, reached, durationMs, failure) => {
    metrics.record(outcome, durationMs / 1000);
    const rejected = outcome.status >= 400 && outcome.status < 500 && rejections.listensForRejections;
    if (!write && !rejected) return undefined;
    const fields: RequestLogFields = {
      requestId: outcome.requestId,
      status: outcome.status,
      outcome: outcomeLabel(outcome),
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
    if (outcome.reason !== undefined) fields.reason = outcome.reason;
    if (outcome.event?.id !== undefined) fields.eventId = outcome.event.id;
    if (outcome.event !== undefined) fields.eventType = outcome.event.type;
    if (outcome.mode !== undefined && options.modes) fields.mode = outcome.mode;
    if (outcome.tenant !== undefined) fields.tenant = outcome.tenant;
    if (outcome.status >= 400) fields.hint = answeredMessage(outcome);
    if (failure !== undefined) fields.error = failure;
    // Diagnostics describe what the sender sent: a 4xx. A 5xx is ours, and its error says why.
    if (outcome.status < 400 || outcome.status >= 500) {
      if (write) writeRequestLog(logger as Logger, write, fields);
      return undefined;
    }
    return describe(options, outcome, reached).then(async (diagnostics) => {
      if (diagnostics) fields.diagnostics = diagnostics;
      if (write) writeRequestLog(logger as Logger, write, fields);
      if (rejected) await rejections.reportRejection(rejection(fields));
    });
  };
}

/** Diagnostics are a courtesy: without them the line is still written and onRejected still told. */
function describe(
  options: ObserverOptions,
  outcome: Outcome,
  reached: Reached,
): Promise<RejectionDiagnostics | undefined> {
  const nowSeconds = Math.floor(options.now() / 1000);
  // A tenant's request names the secrets of its tenant, not the receiver's (it has none of its own).
  const { secretLabels } = reached as { secretLabels?: readonly string[] };
  return rejectionDiagnostics(
    secretLabels ? { ...options.diagnostics, secretLabels } : options.diagnostics,
    reached.request?.headers ?? {},
    'body' in reached ? reached.body : undefined,
    outcome.reason,
    nowSeconds,
  ).catch(() => undefined);
}

/** What a traced receiver needs to start and end a delivery's span, made once with the receiver. */
export interface Traced {
  tracing: Tracing;
  end(span: TraceSpan, outcome: Outcome): void;
}

/** A request's walk through the pipeline, then its log line, metrics and span; never rejects. */
export function receiving(
  pipeline: (received: Received, span?: TraceSpan) => Promise<Walked>,
  observe: Observe,
  failures: Map<string, string | undefined> | undefined,
  report: Report,
  traced: Traced | undefined,
): (request: ReceiveRequest) => Promise<Outcome> {
  // Per request, only its own values are passed on: closures made per request would cost allocations.
  // Not async: the request's own async function returns what this gives, and a promise returned from one is
  // waited on again where a value is not.
  const finish = (
    walked: Walked,
    started: number,
    span: TraceSpan | undefined,
  ): Outcome | Promise<Outcome> => {
    const { outcome } = walked;
    if (span) (traced as Traced).end(span, outcome);
    let failure: string | undefined;
    if (failures) {
      failure = failures.get(outcome.requestId);
      failures.delete(outcome.requestId);
    }
    const logged = observe(outcome, walked.reached, performance.now() - started, failure);
    return logged ? logged.then(() => outcome) : outcome;
  };
  return async (request) => {
    const started = performance.now();
    const received: Received = { request, requestId: request?.requestId ?? nextRequestId() };
    failures?.set(received.requestId, undefined);
    // Without tracing, this one check is all a request pays for it.
    const span = traced ? startDeliverySpan(traced.tracing, request) : undefined;
    let walked: Walked;
    try {
      walked = await (span ? span.inContext(() => pipeline(received, span)) : pipeline(received));
    } catch (cause) {
      // Only a bug can fail the walk (every expected failure is an outcome); still never crash the server.
      const { requestId } = received;
      await report('handler_failed', 'Unexpected receiver error.', cause, {
        requestId,
        reason: 'handler_failed',
      });
      walked = { reached: received, outcome: rejectedOutcome('handler_failed', requestId) };
    }
    return finish(walked, started, span);
  };
}

/** A request that is no object (a caller's mistake, answered 405) still gets its span. */
function startDeliverySpan(tracing: Tracing, request: ReceiveRequest | undefined): TraceSpan | undefined {
  if (typeof request?.method === 'string' && typeof request.headers === 'object') {
    return tracing.startDelivery(request);
  }
  return tracing.startDelivery({ method: String(request?.method), headers: request?.headers ?? {} });
}
