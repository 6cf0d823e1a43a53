/** How long a process remembers a key it handed off. */
export const SEEN_FOR_MS = 10 * 60_000;
/** The most keys remembered; those handed off longest ago are forgotten first, half of them at a time. */
export const MOST_SEEN = 10_000;

/** Bits of one generation's filter: with three bits a key, a new key finds all of its set 2 times in 1,000. */
const BITS = 2 ** 17;

/**
 * The keys this process handed off lately. A delivery of one of them is a redelivery, whose ledger row most
 * likely exists: publishing a copy while the row is written would put one more message in the workers' way,
 * looking again every second until its event settles.
 *
 * Two generations, the newer one replacing the older once it holds half of MOST_SEEN keys or is half of
 * SEEN_FOR_MS old: no key is dropped one by one. A key counts as seen while its generation began within
 * SEEN_FOR_MS, so one handed off within half of it always does. Each generation is a Bloom filter, three bits
 * of a bit array a key: a handoff stores no object, where a Set of keys kept each one alive through several
 * collections and grew its table again in every generation. A new key taken for a seen one (a few in 1,000)
 * is published once its row is written, as a redelivery is: later, never lost.
 */
export function seenKeys(now: () => number = Date.now) {
  let newer = new Int32Array(BITS / 32);
  let older = new Int32Array(BITS / 32);
  let newerSince = now();
  let olderSince = newerSince;
  let held = 0;
  const rotate = (time: number) => {
    const cleared = older.fill(0);
    older = newer;
    olderSince = newerSince;
    newer = cleared;
    newerSince = time;
    held = 0;
  };
  return {
    /** Whether `key` was handed off within SEEN_FOR_MS; remembers it as handed off now either way. */
    again(key: string): boolean {
      const time = now();
      if (time - newerSince >= SEEN_FOR_MS / 2) rotate(time);
      const hash = fnv1a(key);
      // Three positions from two hashes (Kirsch and Mitzenmacher): the second is the first mixed, made odd.
      const step = (Math.imul(hash ^ (hash >>> 16), 0x45d9f3b) ^ (hash >>> 13)) | 1;
      const a = hash & (BITS - 1);
      const b = (hash + step) & (BITS - 1);
      const c = (hash + 2 * step) & (BITS - 1);
      if (has(newer, a) && has(newer, b) && has(newer, c)) return time - newerSince < SEEN_FOR_MS;
      const seen = has(older, a) && has(older, b) && has(older, c) && time - olderSince < SEEN_FOR_MS;
      set(newer, a);
      set(newer, b);
      set(newer, c);
      if (++held >= MOST_SEEN / 2) rotate(time);
      return seen;
    },
  };
}

const has = (bits: Int32Array, at: number) => ((bits[at >>> 5] as number) & (1 << (at & 31))) !== 0;

function set(bits: Int32Array, at: number): void {
  bits[at >>> 5] = (bits[at >>> 5] as number) | (1 << (at & 31));
}

/** FNV-1a over the key's UTF-16 code units. */
function fnv1a(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
