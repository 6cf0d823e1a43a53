import { WebhookConfigError } from '../base/errors.js';
import {
  LISTED_TENANTS,
  type ListTenants,
  type MetricsSeries,
  type MetricsSnapshot,
  OTHER_TENANT,
} from './metrics.js';
import {
  collector,
  histogramSamples,
  metricsOptions,
  type RegisterMetricsOptions,
  type Sample,
} from './prometheus-collector.js';
import { registerTrackerMetrics, TRACKER_LABELS, type TrackerMetricsSource } from './prometheus-tracker.js';

export type { RegisterMetricsOptions } from './prometheus-collector.js';

/** A receiver's metrics options: the shared ones, and whether its series carry a `tenant` label. */
export interface ReceiverMetricsOptions extends RegisterMetricsOptions {
  /**
   * With the receiver's `tenant` option: a `tenant` label on the request series. `true` labels the first 100
   * tenants whose requests verified (later ones: `other`); a list labels those tenants only, however many
   * others came first (every other one: `other`), from the moment registerMetrics is called. A request with no
   * verified tenant has `tenant=""`, so an unknown tenant never makes a series. Default: no tenant label.
   */
  tenants?: true | readonly string[];
  /**
   * A message tracker (createMessageTracker) whose numbers to expose too: receipt latency by operator and final
   * status, messages still open, transitions by source and reconciled messages by outcome.
   */
  tracker?: TrackerMetricsSource;
}
export type { TrackerMetricsSource } from './prometheus-tracker.js';
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
 * With `tracker`: `<prefix>message_receipt_latency_seconds` (histogram by operator and final status),
 * `<prefix>messages_open`, `<prefix>message_transitions_total` by source and `<prefix>reconciled_messages_total`
 * by outcome. A worker's own series: registerWorkerMetrics.
 */
export function registerMetrics(source: MetricsSource, options: ReceiverMetricsOptions): void {
  const tenantLabel = tenantLabelOf(options?.tenants);
  const tracked = options?.tracker ? TRACKER_LABELS : [];
  const own = ['outcome', 'status', 'event_type', ...(tenantLabel ? ['tenant'] : []), ...tracked];
  const { registry, prefix, labels: extra } = metricsOptions(options, own);
  // The receiver bounds the tenants it counts apart: it must know the listed ones, or they may fall in `other`.
  if (Array.isArray(options.tenants))
    (source as { [LISTED_TENANTS]?: ListTenants })[LISTED_TENANTS]?.(options.tenants);

  const seriesLabels = (series: MetricsSeries): Record<string, string | number> => {
    const labels = { ...extra, outcome: series.outcome, status: series.status, event_type: series.eventType };
    return tenantLabel ? { ...labels, tenant: series.tenant } : labels;
  };
  const snapshot = (): MetricsSnapshot => {
    const read = source.metrics();
    return { ...read, series: bySeriesLabels(read.series, tenantLabel) };
  };

  const requests = `${prefix}requests_total`;
  registry.registerMetric(
    collector(
      requests,
      'Webhook requests answered, by outcome (reason code), status and event type.',
      'counter',
      () => snapshot().series.map((series) => ({ value: series.count, labels: seriesLabels(series) })),
    ),
  );

  const duration = `${prefix}request_duration_seconds`;
  registry.registerMetric(
    collector(
      duration,
      'Time from request to answer, by outcome, status and event type.',
      'histogram',
      () => {
        const { bucketBounds, series: all } = snapshot();
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
  if (options.tracker !== undefined) registerTrackerMetrics(registry, prefix, extra, options.tracker);
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

/** What each tenant is labelled as: itself when allowed, else `other`; undefined without a tenant label. */
function tenantLabelOf(tenants: ReceiverMetricsOptions['tenants']): ((tenant: string) => string) | undefined {
  if (tenants === undefined) return undefined;
  if (tenants === true) return (tenant) => tenant;
  if (!Array.isArray(tenants) || !tenants.every((tenant) => typeof tenant === 'string')) {
    throw new WebhookConfigError(
      "tenants must be true (the first 100 tenants seen) or a list of tenant names: tenants: ['acme', 'globex'].",
    );
  }
  const allowed = new Set<string>(tenants);
  return (tenant) => (tenant === '' || allowed.has(tenant) ? tenant : OTHER_TENANT);
}

/**
 * The series as Prometheus gets them: the receiver keeps one per tenant, so those whose labels come out the same
 * (every tenant without a tenant label, the tenants of `other`) are added up into one.
 */
function bySeriesLabels(
  series: readonly MetricsSeries[],
  tenantLabel: ((tenant: string) => string) | undefined,
): MetricsSeries[] {
  const merged = new Map<string, MetricsSeries>();
  for (const one of series) {
    const tenant = tenantLabel ? tenantLabel(one.tenant) : '';
    const key = `${one.outcome}\n${one.status}\n${one.eventType}\n${tenant}`;
    const into = merged.get(key);
    if (into === undefined) {
      merged.set(key, { ...one, tenant, durationBuckets: [...one.durationBuckets] });
      continue;
    }
    into.count += one.count;
    into.durationSecondsSum += one.durationSecondsSum;
    one.durationBuckets.forEach((count, index) => {
      into.durationBuckets[index] = (into.durationBuckets[index] ?? 0) + count;
    });
  }
  return [...merged.values()];
}
