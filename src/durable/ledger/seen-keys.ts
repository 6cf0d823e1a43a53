/** How long a process remembers a key it handed off. */
export const SEEN_FOR_MS = 10 * 60_000;
/** The most keys remembered; the one handed off longest ago is forgotten first. */
export const MOST_SEEN = 10_000;

/**
 * The keys this process handed off lately. A delivery of one of them is a redelivery, whose ledger row most
 * likely exists: publishing a copy while the row is written would put one more message in the workers' way,
 * looking again every second until its event settles.
 */
export function seenKeys(now: () => number = Date.now) {
  const seen = new Map<string, number>();
  return {
    /** Whether `key` was handed off within SEEN_FOR_MS; remembers it as handed off now either way. */
    again(key: string): boolean {
      const at = seen.get(key);
      const time = now();
      seen.delete(key);
      seen.set(key, time);
      if (seen.size > MOST_SEEN) seen.delete(seen.keys().next().value as string);
      return at !== undefined && time - at < SEEN_FOR_MS;
    },
  };
}
