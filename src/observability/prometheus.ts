import type { Metric, Registry } from 'prom-client';
import type { MetricsSnapshot } from './metrics.js';

/** Anything with the receiver's metrics(): a Receiver of any catalogue and store. */
export interface MetricsSource {
  metrics(): MetricsSnapshot;
}

export interface RegisterMetricsOptions {
  /** prom-client's Registry to add the metrics to (its default `register` is a Registry too). */
  registry: Registry;
  /** Prefix of the metric names. Default `messaging_webhooks_`. */
  prefix?: string;
  /** Labels added to every series, for several receivers in one registry: `{ receiver: 'sms' }`. */
  labels?: Record<string, string>;
}

type Value = { value: number; labels: Record<string, string | number>; metricName?: string };

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
 */
export function registerMetrics(source: MetricsSource, options: RegisterMetricsOptions): void {
  const prefix = options.prefix ?? 'messaging_webhooks_';
  const extra = options.labels ?? {};
  const collector = (name: string, help: string, type: string, values: () => Value[]) =>
    ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => undefined,
    }) as unknown as Metric;

  const seriesLabels = (series: MetricsSnapshot['series'][number]) => ({
    ...extra,
    outcome: series.outcome,
    status: series.status,
    event_type: series.eventType,
  });

  const requests = `${prefix}requests_total`;
  options.registry.registerMetric(
    collector(
      requests,
      'Webhook requests answered, by outcome (reason code), status and event type.',
      'counter',
      () => source.metrics().series.map((series) => ({ value: series.count, labels: seriesLabels(series) })),
    ),
  );

  const duration = `${prefix}request_duration_seconds`;
  options.registry.registerMetric(
    collector(
      duration,
      'Time from request to answer, by outcome, status and event type.',
      'histogram',
      () => {
        const { bucketBounds, series: all } = source.metrics();
        const values: Value[] = [];
        for (const series of all) {
          const labels = seriesLabels(series);
          series.durationBuckets.forEach((count, index) => {
            const le = index < bucketBounds.length ? (bucketBounds[index] as number) : '+Inf';
            values.push({ value: count, labels: { ...labels, le }, metricName: `${duration}_bucket` });
          });
          values.push({ value: series.durationSecondsSum, labels, metricName: `${duration}_sum` });
          values.push({ value: series.count, labels, metricName: `${duration}_count` });
        }
        return values;
      },
    ),
  );

  const gauge = (name: string, help: string, read: (snapshot: MetricsSnapshot) => number | undefined) =>
    options.registry.registerMetric(
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
