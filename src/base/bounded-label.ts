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
