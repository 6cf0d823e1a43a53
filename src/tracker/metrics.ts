import { BoundedLabel, cumulative, observe } from '../base/series.js';
import type { ReconcileSummary } from './reconcile.js';
import type { StatusSource, StatusTransition } from './record.js';

/** Upper bounds (seconds) of the receipt latency histogram, a second to the 72 h a receipt may take. */
export const RECEIPT_LATENCY_BUCKETS: readonly number[] = [
  1,
  2.5,
  5,
  10,
  30,
  60,
  120,
  300,
  600,
  1800,
  3600,
  3 * 3600,
  12 * 3600,
  24 * 3600,
  72 * 3600,
];
/** Operators counted separately; past this many, further operators are counted as `other`. */
export const MAX_OPERATORS = 50;

/** One receipt latency series: the receipts of one operator with one final status. */
export interface ReceiptLatencySeries {
  /** The operator the service reported; `''` when it named none, `other` past the first 50. */
  operator: string;
  status: 'delivered' | 'failed';
  count: number;
  secondsSum: number;
  /** Cumulative counts per `bucketBounds` bound, then the +Inf bucket (equal to count). */
  buckets: number[];
}

/** What this process's tracker counted since it was created; `countOpen()` gives the messages still open. */
export interface TrackerMetricsSnapshot {
  /** Bounds of the latency buckets, in seconds. */
  bucketBounds: readonly number[];
  /** Time from `sentAt` to the final receipt, for messages expected with a `sentAt`. */
  receiptLatency: ReceiptLatencySeries[];
  /** Transitions this process made (each transition is made by one process only), by what brought them. */
  transitions: Record<StatusSource, number>;
  /** Messages reconciliation passes asked about, by what came of each. */
  reconciled: Omit<ReconcileSummary, 'checked'>;
}

interface Latency {
  readonly operator: string;
  readonly status: 'delivered' | 'failed';
  count: number;
  sum: number;
  readonly buckets: Float64Array;
}

/** The tracker's counters: a few increments per transition, turned into a snapshot only when read. */
export class TrackerMetricsRecorder {
  readonly #operators = new BoundedLabel(MAX_OPERATORS);
  readonly #latency = new Map<string, Latency>();
  readonly #transitions: Record<StatusSource, number> = { expect: 0, webhook: 0, reconcile: 0, timeout: 0 };
  readonly #reconciled: TrackerMetricsSnapshot['reconciled'] = {
    moved: 0,
    stillOpen: 0,
    unknown: 0,
    failed: 0,
  };

  transition({ source, to, operator, latencyMs }: StatusTransition): void {
    this.#transitions[source]++;
    if ((to !== 'delivered' && to !== 'failed') || latencyMs === undefined) return;
    const label = this.#operators.of(operator ?? '');
    const key = `${label}\n${to}`;
    let series = this.#latency.get(key);
    if (!series) {
      const buckets = new Float64Array(RECEIPT_LATENCY_BUCKETS.length + 1);
      series = { operator: label, status: to, count: 0, sum: 0, buckets };
      this.#latency.set(key, series);
    }
    const seconds = Math.max(0, latencyMs) / 1000;
    series.count++;
    series.sum += seconds;
    observe(series.buckets, RECEIPT_LATENCY_BUCKETS, seconds);
  }

  reconciled(summary: ReconcileSummary): void {
    this.#reconciled.moved += summary.moved;
    this.#reconciled.stillOpen += summary.stillOpen;
    this.#reconciled.unknown += summary.unknown;
    this.#reconciled.failed += summary.failed;
  }

  snapshot(): TrackerMetricsSnapshot {
    const receiptLatency = [...this.#latency.values()].map(({ operator, status, count, sum, buckets }) => ({
      operator,
      status,
      count,
      secondsSum: sum,
      buckets: cumulative(buckets),
    }));
    return {
      bucketBounds: RECEIPT_LATENCY_BUCKETS,
      receiptLatency,
      transitions: { ...this.#transitions },
      reconciled: { ...this.#reconciled },
    };
  }
}
