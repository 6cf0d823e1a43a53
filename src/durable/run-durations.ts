import { cumulative, observe } from '../base/series.js';
import type { DurationCounts, RunDurations } from './port.js';

/**
 * Upper bounds (seconds) of a worker's run-time histogram: handlers of a job run from milliseconds to the
 * 60 s handlerTimeoutMs default, and some are given longer.
 */
export const RUN_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

interface Counts {
  count: number;
  sum: number;
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly buckets: Float64Array;
}

const empty = (): Counts => ({
  count: 0,
  sum: 0,
  buckets: new Float64Array(RUN_DURATION_BUCKETS.length + 1),
});

/** Times a worker's runs by whether their handlers succeeded; a run costs a few increments. */
export function runDurations() {
  const byResult = { completed: empty(), failed: empty() };

  function record(result: 'completed' | 'failed', seconds: number): void {
    const counts = byResult[result];
    counts.count++;
    counts.sum += seconds;
    observe(counts.buckets, RUN_DURATION_BUCKETS, seconds);
  }

  /** Runs `work`, recording how long it took by whether it succeeded. */
  async function time(work: () => Promise<unknown>): Promise<void> {
    const started = performance.now();
    try {
      await work();
      record('completed', (performance.now() - started) / 1000);
    } catch (error) {
      record('failed', (performance.now() - started) / 1000);
      throw error;
    }
  }

  const read = ({ count, sum, buckets }: Counts): DurationCounts => ({
    count,
    sumSeconds: sum,
    buckets: cumulative(buckets),
  });

  function snapshot(): RunDurations {
    return {
      bucketBounds: RUN_DURATION_BUCKETS,
      completed: read(byResult.completed),
      failed: read(byResult.failed),
    };
  }

  return { time, snapshot };
}
