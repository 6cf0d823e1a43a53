import type { Outcome } from '../contract/outcome.js';
import { outcomeLabel } from '../contract/outcome.js';
import type { RejectionReason } from '../contract/reasons.js';
import type { Reached } from '../pipeline/index.js';
import type { WebhookRejection } from './diagnostics.js';
import { type DiagnosticsContext, type RejectionDiagnostics, rejectionDiagnostics } from './diagnostics.js';
import type { RequestLogFields } from './log-line.js';
import { type Logger, requestLogWriter, writeRequestLog } from './logger.js';
import type { MetricsRecorder } from './metrics.js';

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
  return rejectionDiagnostics(
    options.diagnostics,
    reached.request?.headers ?? {},
    'body' in reached ? reached.body : undefined,
    outcome.reason,
    nowSeconds,
  ).catch(() => undefined);
}

/** The message of the error answer (our own JSON): the hint the sender got. */
function answeredMessage(outcome: Outcome): string | undefined {
  try {
    const message = (JSON.parse(outcome.body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

function rejection(fields: RequestLogFields): WebhookRejection {
  const { requestId, status, reason, hint, eventId, eventType, mode, tenant, diagnostics } = fields;
  const told: WebhookRejection = {
    requestId,
    status,
    reason: reason as RejectionReason,
    message: hint ?? '',
  };
  if (eventId !== undefined) told.eventId = eventId;
  if (eventType !== undefined) told.eventType = eventType;
  if (mode !== undefined) told.mode = mode as WebhookRejection['mode'];
  if (tenant !== undefined) told.tenant = tenant;
  if (diagnostics !== undefined) told.diagnostics = diagnostics;
  return told;
}
