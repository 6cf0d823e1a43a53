import type { Metric } from 'prom-client';
import { WebhookConfigError } from '../base/errors.js';
import type { WorkerCounters } from '../durable/port.js';
import {
  collector,
  histogramSamples,
  metricsOptions,
  type RegisterMetricsOptions,
  type Sample,
} from './prometheus-collector.js';

/** Anything with a worker's counters(): a worker of messaging-webhooks/bullmq or /pg-boss. */
export interface WorkerMetricsSource {
  counters(): WorkerCounters;
}

interface Registered {
  worker: WorkerMetricsSource;
  labels: Record<string, string>;
}

/** The workers behind each registry's worker series: a second worker joins the series of the first. */
const registeredWorkers = new WeakMap<Metric, Registered[]>();

const sameLabels = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
};

/**
 * Exposes a worker's counters through prom-client, read from worker.counters() when Prometheus scrapes.
 *
 *   registerWorkerMetrics(worker, { registry: register })   // import { register } from 'prom-client'
 *
 * Series: `<prefix>worker_jobs_total` by result (`completed`, `retried`: a failed run the engine runs again,
 * `dead_lettered`: a job this worker told onError is in the dead-letter), the gauge `<prefix>worker_jobs_running`
 * and `<prefix>worker_job_duration_seconds`, a histogram of run times by result (`completed` or `failed`).
 * Several workers share one registry when each has its own `labels` (`{ queue: 'sms' }`); their series add up
 * to the process's.
 */
export function registerWorkerMetrics(worker: WorkerMetricsSource, options: RegisterMetricsOptions): void {
  const { registry, prefix, labels } = metricsOptions(options, ['result']);
  const jobs = `${prefix}worker_jobs_total`;
  const existing = registry.getSingleMetric(jobs);
  const workers = existing && registeredWorkers.get(existing);
  if (workers) {
    if (workers.some((other) => sameLabels(other.labels, labels))) {
      throw new WebhookConfigError(
        `A worker with the labels ${JSON.stringify(labels)} already exposes ${jobs} in this registry: give each ` +
          "worker distinct labels, as registerWorkerMetrics(worker, { registry, labels: { queue: 'sms' } }).",
      );
    }
    workers.push({ worker, labels });
    return;
  }
  const all: Registered[] = [{ worker, labels }];
  const samples = (read: (counters: WorkerCounters, labels: Record<string, string>) => Sample[]) => () =>
    all.flatMap((one) => read(one.worker.counters(), one.labels));

  const metric = collector(
    jobs,
    'Jobs this worker ran, by result: completed, retried (a failed run the engine runs again) or dead_lettered.',
    'counter',
    samples(({ completed, retried, deadLettered }, extra) => [
      { value: completed, labels: { ...extra, result: 'completed' } },
      { value: retried, labels: { ...extra, result: 'retried' } },
      { value: deadLettered, labels: { ...extra, result: 'dead_lettered' } },
    ]),
  );
  registry.registerMetric(metric);
  registeredWorkers.set(metric, all);

  registry.registerMetric(
    collector(
      `${prefix}worker_jobs_running`,
      'Jobs this worker is running now.',
      'gauge',
      samples(({ running }, extra) => [{ value: running, labels: { ...extra } }]),
    ),
  );

  const duration = `${prefix}worker_job_duration_seconds`;
  registry.registerMetric(
    collector(
      duration,
      "Time a run of a job's handlers took on this worker, by result: completed or failed.",
      'histogram',
      samples(({ durations }, extra) =>
        durations
          ? (['completed', 'failed'] as const).flatMap((result) => {
              const { buckets, sumSeconds, count } = durations[result];
              return histogramSamples(
                duration,
                durations.bucketBounds,
                { ...extra, result },
                {
                  buckets,
                  sum: sumSeconds,
                  count,
                },
              );
            })
          : [],
      ),
    ),
  );
}
