import { WebhookConfigError } from '../base/errors.js';
import type { TrackerMetricsSnapshot } from '../tracker/metrics.js';
import type { StatusSource } from '../tracker/record.js';
import {
  collector,
  histogramSamples,
  type RegisterMetricsOptions,
  type Sample,
} from './prometheus-collector.js';

/** Anything with a message tracker's metrics() and countOpen(): a tracker from createMessageTracker. */
export interface TrackerMetricsSource {
  metrics(): TrackerMetricsSnapshot;
  countOpen(): Promise<number>;
}

/** The labels the tracker's series set beyond the receiver's own (status, outcome): `labels` may not take them. */
export const TRACKER_LABELS = ['operator', 'source'];

const OUTCOMES = { moved: 'moved', stillOpen: 'still_open', unknown: 'unknown', failed: 'failed' } as const;
const SOURCES: readonly StatusSource[] = ['expect', 'webhook', 'reconcile', 'timeout'];

/**
 * The tracker's series: `<prefix>message_receipt_latency_seconds` (histogram by operator and final status),
 * `<prefix>messages_open` (gauge, read from the status store at scrape time), `<prefix>message_transitions_total`
 * by source and `<prefix>reconciled_messages_total` by outcome.
 */
export function registerTrackerMetrics(
  registry: RegisterMetricsOptions['registry'],
  prefix: string,
  extra: Record<string, string>,
  tracker: TrackerMetricsSource,
): void {
  if (typeof tracker?.metrics !== 'function' || typeof tracker.countOpen !== 'function') {
    throw new WebhookConfigError(
      'tracker must be a message tracker: registerMetrics(receiver, { registry, tracker: createMessageTracker(…) }).',
    );
  }
  const latency = `${prefix}message_receipt_latency_seconds`;
  registry.registerMetric(
    collector(
      latency,
      'Time from sentAt to the final receipt, by operator and final status.',
      'histogram',
      () => {
        const { bucketBounds, receiptLatency } = tracker.metrics();
        return receiptLatency.flatMap((series): Sample[] =>
          histogramSamples(
            latency,
            bucketBounds,
            { ...extra, operator: series.operator, status: series.status },
            { buckets: series.buckets, sum: series.secondsSum, count: series.count },
          ),
        );
      },
    ),
  );
  registry.registerMetric(
    collector(`${prefix}messages_open`, 'Expected messages with no final status yet.', 'gauge', async () => [
      { value: await tracker.countOpen(), labels: { ...extra } },
    ]),
  );
  registry.registerMetric(
    collector(
      `${prefix}message_transitions_total`,
      'Message status transitions, by what brought them: expect, webhook, reconcile or timeout.',
      'counter',
      () => {
        const { transitions } = tracker.metrics();
        return SOURCES.map((source) => ({ value: transitions[source], labels: { ...extra, source } }));
      },
    ),
  );
  registry.registerMetric(
    collector(
      `${prefix}reconciled_messages_total`,
      'Messages reconciliation asked the service about, by outcome: moved, still_open, unknown or failed.',
      'counter',
      () => {
        const { reconciled } = tracker.metrics();
        return Object.entries(OUTCOMES).map(([key, outcome]) => ({
          value: reconciled[key as keyof typeof OUTCOMES],
          labels: { ...extra, outcome },
        }));
      },
    ),
  );
}
