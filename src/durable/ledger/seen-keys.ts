/** How long a process remembers a key it handed off. */
export const SEEN_FOR_MS = 10 * 60_000;
/** The most keys remembered; those handed off longest ago are forgotten first, half of them at a time. */
export const MOST_SEEN = 10_000;

/**
 * The keys this process handed off lately. A delivery of one of them is a redelivery, whose ledger row most
 * likely exists: publishing a copy while the row is written would put one more message in the workers' way,
 * looking again every second until its event settles.
 *
 * Two generations of keys, the newer one replacing the older once it holds half of MOST_SEEN: no key is
 * dropped one by one. A Map that drops its oldest key on every insert keeps the dropped slots at its front
 * until it grows, and finding its first live key walks all of them on each handoff.
 */
export function seenKeys(now: () => number = Date.now) {
  let newer = new Map<string, number>();
  let older = new Map<string, number>();
  return {
    /** Whether `key` was handed off within SEEN_FOR_MS; remembers it as handed off now either way. */
    again(key: string): boolean {
      const time = now();
      const at = newer.get(key) ?? older.get(key);
      newer.set(key, time);
      if (newer.size >= MOST_SEEN / 2) {
        older = newer;
        newer = new Map();
      }
      return at !== undefined && time - at < SEEN_FOR_MS;
    },
  };
}
