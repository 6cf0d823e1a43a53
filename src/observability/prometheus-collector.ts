import type { Metric, Registry } from 'prom-client';
import { WebhookConfigError } from '../base/errors.js';
import { option, optionMistake, rules } from '../base/options.js';

export interface RegisterMetricsOptions {
  /** prom-client's Registry to add the metrics to (its default `register` is a Registry too). */
  registry: Registry;
  /** Prefix of the metric names. Default `messaging_webhooks_`. */
  prefix?: string;
  /**
   * Labels added to every series, to tell several receivers or workers in one registry apart:
   * `{ receiver: 'sms' }`, `{ queue: 'sms-webhooks' }`.
   */
  labels?: Record<string, string>;
}

export type Sample = { value: number; labels: Record<string, string | number>; metricName?: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const PREFIX = rules.that<string>(
  'the start of a Prometheus metric name (letters, digits, _ and :, no digit first)',
  (value) => typeof value === 'string' && METRIC_NAME.test(`${value}x`),
);

/**
 * The prefix and labels of the options, checked: a wrong one fails at registration, not as a scrape that
 * Prometheus rejects. `own` are the labels the library sets on its series, which `labels` may not take.
 */
export function metricsOptions(
  options: RegisterMetricsOptions,
  own: readonly string[],
): { registry: Registry; prefix: string; labels: Record<string, string> } {
  const { registry, labels = {} } = options ?? {};
  if (typeof registry?.registerMetric !== 'function') {
    throw new WebhookConfigError(
      "registry must be a prom-client Registry: pass `register` (import { register } from 'prom-client') or a new Registry().",
    );
  }
  const prefix = option('prefix', options.prefix, 'messaging_webhooks_', PREFIX);
  const reserved = [...own, 'le'];
  for (const [name, value] of Object.entries(labels)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__') || reserved.includes(name)) {
      throw new WebhookConfigError(
        `labels: "${name}" cannot be a label name here: use letters, digits and _ (no digit or __ first), and none of ${reserved.join(', ')}.`,
      );
    }
    // No default here: a label given as undefined is a mistake too.
    const mistake = optionMistake(`labels.${name}`, value, rules.string);
    if (mistake) throw new WebhookConfigError(mistake);
  }
  return { registry, prefix, labels };
}

/**
 * A metric prom-client reads at scrape time: `values` computes its samples from the source then, so the
 * source's hot path stays a few increments and never touches prom-client.
 */
export function collector(
  name: string,
  help: string,
  type: string,
  values: () => Sample[] | Promise<Sample[]>,
): Metric {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: await values() }),
    reset: () => undefined,
  } as unknown as Metric;
}

/** The `_bucket`, `_sum` and `_count` samples of one histogram series, from cumulative bucket counts. */
export function histogramSamples(
  name: string,
  bounds: readonly number[],
  labels: Record<string, string | number>,
  counts: { buckets: readonly number[]; sum: number; count: number },
): Sample[] {
  const samples: Sample[] = counts.buckets.map((value, index) => {
    const le = index < bounds.length ? (bounds[index] as number) : '+Inf';
    return { value, labels: { ...labels, le }, metricName: `${name}_bucket` };
  });
  samples.push({ value: counts.sum, labels, metricName: `${name}_sum` });
  samples.push({ value: counts.count, labels, metricName: `${name}_count` });
  return samples;
}
