import type { MetricsSnapshot } from './metrics.js';
import {
  collector,
  histogramSamples,
  metricsOptions,
  type RegisterMetricsOptions,
  type Sample,
} from './prometheus-collector.js';

export type { RegisterMetricsOptions } from './prometheus-collector.js';
export { registerWorkerMetrics, type WorkerMetricsSource } from './prometheus-worker.js';

/** Anything with the receiver's metrics(): a Receiver of any catalogue and store. */
export interface MetricsSource {
  metrics(): MetricsSnapshot;
}

/**
 * Exposes a receiver's metrics through prom-client, read from receiver.metrics() when Prometheus scrapes:
 * the request path stays a few increments, and the receiver never imports prom-client.
 *
 *   registerMetrics(receiver, { registry: register })   // import { register } from 'prom-client'
 *
 * Series: `<prefix>requests_total` and `<prefix>request_duration_seconds` (histogram) by outcome, status
 * and event_type; gauges `<prefix>handlers_running` and `<prefix>queue_waiting`. With a durable queue (receiver option `queue`), gauges
 * of its jobs as last read from the engine (every few seconds): `<prefix>durable_jobs_waiting`,
 * `<prefix>durable_jobs_running`, `<prefix>durable_jobs_retrying` and `<prefix>durable_dead_letters`.
 * A worker's own series: registerWorkerMetrics.
 */
export function registerMetrics(source: MetricsSource, options: RegisterMetricsOptions): void {
  const { registry, prefix, labels: extra } = metricsOptions(options, ['outcome', 'status', 'event_type']);

  const seriesLabels = (series: MetricsSnapshot['series'][number]) => ({
    ...extra,
    outcome: series.outcome,
    status: series.status,
    event_type: series.eventType,
  });

  const requests = `${prefix}requests_total`;
  registry.registerMetric(
    collector(
      requests,
      'Webhook requests answered, by outcome (reason code), status and event type.',
      'counter',
      () => source.metrics().series.map((series) => ({ value: series.count, labels: seriesLabels(series) })),
    ),
  );

  const duration = `${prefix}request_duration_seconds`;
  registry.registerMetric(
    collector(
      duration,
      'Time from request to answer, by outcome, status and event type.',
      'histogram',
      () => {
        const { bucketBounds, series: all } = source.metrics();
        return all.flatMap((series): Sample[] =>
          histogramSamples(duration, bucketBounds, seriesLabels(series), {
            buckets: series.durationBuckets,
            sum: series.durationSecondsSum,
            count: series.count,
          }),
        );
      },
    ),
  );

  const gauge = (name: string, help: string, read: (snapshot: MetricsSnapshot) => number | undefined) =>
    registry.registerMetric(
      collector(`${prefix}${name}`, help, 'gauge', () => {
        const value = read(source.metrics()) ?? 0;
        return [{ value, labels: { ...extra } }];
      }),
    );
  gauge('handlers_running', 'Handlers running now.', ({ queue }) => queue.running);
  gauge(
    'queue_waiting',
    'Claimed events waiting for a handler slot (past maxQueue: 503 overloaded).',
    ({ queue }) => queue.waiting,
  );
  if (!source.metrics().durable) return;
  gauge('durable_jobs_waiting', 'Durable jobs waiting for a worker.', ({ durable }) => durable?.waiting);
  gauge('durable_jobs_running', 'Durable jobs a worker is running.', ({ durable }) => durable?.running);
  gauge(
    'durable_jobs_retrying',
    'Durable jobs waiting out a backoff before their next attempt.',
    ({ durable }) => durable?.retrying,
  );
  gauge(
    'durable_dead_letters',
    "Durable jobs that failed every attempt, in the engine's dead-letter.",
    ({ durable }) => durable?.deadLettered,
  );
}
