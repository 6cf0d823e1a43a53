import type { Outcome } from '../contract/outcome.js';
import { TRACE_ATTRIBUTE, type TraceSpan } from '../contract/tracing.js';
import { outcomeLabel } from './metrics.js';

/** How the receiver acknowledges: handlers before the answer, after it, or in a job engine's workers. */
export type AckMode = 'sync' | 'async' | 'durable';

/**
 * Ends a delivery's span with its answer. As the HTTP semantic conventions have it for a server, only a 5xx
 * marks the span failed: a 4xx is the sender's mistake, told by the status code and the reason. Nothing of
 * the signature, the secrets or the body is recorded.
 */
export function endDeliverySpan(span: TraceSpan, outcome: Outcome, ack: AckMode, modes: boolean): void {
  if (span.recording === false) {
    span.end();
    return;
  }
  const { event } = outcome;
  span.setAttributes({
    'http.response.status_code': outcome.status,
    'messaging.message.id': event?.id,
    [TRACE_ATTRIBUTE.requestId]: outcome.requestId,
    [TRACE_ATTRIBUTE.outcome]: outcomeLabel(outcome),
    [TRACE_ATTRIBUTE.reason]: outcome.reason,
    [TRACE_ATTRIBUTE.eventType]: event?.type,
    [TRACE_ATTRIBUTE.eventId]: event?.id,
    // A single secret or list names no mode: left out, as in the log line.
    [TRACE_ATTRIBUTE.mode]: modes ? outcome.mode : undefined,
    [TRACE_ATTRIBUTE.tenant]: outcome.tenant,
    [TRACE_ATTRIBUTE.ack]: outcome.mode === undefined ? undefined : ack,
  });
  if (outcome.status >= 500) span.fail(outcome.reason ?? String(outcome.status));
  span.end();
}
