import type { Outcome } from '../outcome.js';
import { outcomeLabel } from '../outcome.js';
import type { ReceiveRequest } from '../request.js';
import type { Delivery } from '../stages/delivery.js';
import { type DiagnosticsContext, rejectionDiagnostics } from './diagnostics.js';
import { type Logger, type RequestLogFields, writeRequestLog } from './logger.js';
import type { MetricsRecorder } from './metrics.js';

export interface ObserverOptions {
  logger: Logger | undefined;
  metrics: MetricsRecorder;
  diagnostics: DiagnosticsContext;
  /** Clock in milliseconds (the receiver's `now` option), for the clock skew of rejected signatures. */
  now: () => number;
}

/**
 * Records every answered request in the metrics and writes its log line. Without a logger nothing is built;
 * diagnostics are computed for rejections only, so an accepted delivery costs a few increments.
 */
export function createRequestObserver(options: ObserverOptions) {
  const { logger, metrics } = options;
  return (
    outcome: Outcome,
    request: ReceiveRequest,
    delivery: Delivery,
    durationMs: number,
  ): Promise<void> | undefined => {
    metrics.record(outcome, durationMs / 1000);
    if (!logger) return undefined;
    const fields: RequestLogFields = {
      requestId: outcome.requestId,
      status: outcome.status,
      outcome: outcomeLabel(outcome),
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
    if (outcome.reason !== undefined) fields.reason = outcome.reason;
    if (outcome.event?.id !== undefined) fields.eventId = outcome.event.id;
    if (outcome.event !== undefined) fields.eventType = outcome.event.type;
    if (outcome.mode !== undefined) fields.mode = outcome.mode;
    if (outcome.status < 400) {
      writeRequestLog(logger, fields);
      return undefined;
    }
    const nowSeconds = Math.floor(options.now() / 1000);
    return rejectionDiagnostics(
      options.diagnostics,
      request?.headers ?? {},
      delivery.body,
      outcome.reason,
      nowSeconds,
    )
      .then(
        (diagnostics) => {
          fields.diagnostics = diagnostics;
        },
        () => {
          // Diagnostics are a courtesy: the line is still written without them.
        },
      )
      .then(() => writeRequestLog(logger, fields));
  };
}
