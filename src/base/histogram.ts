/**
 * Per-bucket counts of a histogram, kept the cheap way (one slot per bound, then +Inf) and turned cumulative,
 * as Prometheus exposes them, only when read.
 */

/** Counts `value` in the slot of the first bound it does not exceed, or in the last slot (+Inf). */
export function observe(buckets: Float64Array, bounds: readonly number[], value: number): void {
  let bucket = 0;
  while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket++;
  buckets[bucket] = (buckets[bucket] as number) + 1;
}

/** The per-bucket counts made cumulative: each bound's count includes every lower one's. */
export function cumulative(buckets: Float64Array): number[] {
  let total = 0;
  return Array.from(buckets, (value) => (total += value));
}
