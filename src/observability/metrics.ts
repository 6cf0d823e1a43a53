import { BoundedLabel } from '../base/bounded-label.js';
import { cumulative, observe } from '../base/histogram.js';
import { type Outcome, outcomeLabel } from '../contract/outcome.js';
import type { DurableQueueCounts } from '../durable/port.js';

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
