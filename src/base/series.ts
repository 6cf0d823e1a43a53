// What every metric's series are counted with: a label whose values are kept to a bound, and a histogram's
// per-bucket counts, kept the cheap way (one slot per bound, then +Inf) and turned cumulative, as Prometheus
// exposes them, only when read.

/**
 * The values of one metric label, kept to a bound so that what senders or services report never grows the
 * series without end: the first `max` values seen are themselves, later ones share `other`. Listed values are
 * always themselves, whatever the bound.
 */
export class BoundedLabel {
  readonly #seen = new Set<string>();
  readonly #listed = new Set<string>();

  constructor(
    readonly max: number,
    readonly other = 'other',
  ) {}

  /** The label `value` is counted under. */
  of(value: string): string {
    if (this.#seen.has(value) || this.#listed.has(value)) return value;
    if (this.#seen.size >= this.max) return this.other;
    this.#seen.add(value);
    return value;
  }

  /** Counts these values apart from now on, beyond the bound (which other values still have). */
  list(values: readonly string[]): void {
    for (const value of values) this.#listed.add(value);
  }
}

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
