// Heap bytes per completed key of the MemoryDedupeStore, at 1,000,000 and at 100,000 keys (or at [keys]):
//   npm run build && node --expose-gc bench/memory-store.mjs [keys]
// Keys are made the way the receiver makes them: `${mode}:${event id}`, the id parsed out of a JSON body,
// so the measured cost includes the key string as the store really holds it.
import { MemoryDedupeStore } from '../dist/src/index.js';

if (typeof globalThis.gc !== 'function') {
  console.error('Run with node --expose-gc bench/memory-store.mjs');
  process.exit(1);
}

const SIZES = process.argv[2] === undefined ? [100_000, 1_000_000] : [Number(process.argv[2])];
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A body-like JSON text per event; the id comes out of JSON.parse as it does in the receiver. */
function eventId(n) {
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = ALPHABET[n % 32] + tail;
    n = Math.floor(n / 32);
  }
  return JSON.parse(`{"id":"evt_01JD8Z6Q2W${tail}"}`).id;
}

function heapUsed() {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/** Fills a fresh store with `KEYS` completions; prints the heap they hold per key. Returns the store. */
function measure(KEYS) {
  const store = new MemoryDedupeStore({ maxEntries: KEYS });
  const before = heapUsed();
  const started = process.hrtime.bigint();
  for (let n = 0; n < KEYS; n++) {
    const key = `live:${eventId(n)}`;
    const claim = store.claimSync(key, 60_000);
    if (claim.status !== 'claimed' || !store.completeSync(key, claim.token, 7 * 24 * 3600_000)) {
      throw new Error(`key ${n} was not claimed and completed`);
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = heapUsed();
  if (store.size !== KEYS) throw new Error(`store holds ${store.size} keys, expected ${KEYS}`);

  const perKey = (after - before) / KEYS;
  console.log(`node ${process.version}, MemoryDedupeStore, ${KEYS.toLocaleString('en-US')} completed keys`);
  console.log(`key example: live:${eventId(12345)} (${`live:${eventId(12345)}`.length} chars)`);
  console.log(
    `heap used: ${((after - before) / 2 ** 20).toFixed(1)} MiB → ${perKey.toFixed(1)} bytes per key (target ≤ 120)`,
  );
  console.log(
    `claim + complete: ${Math.round(KEYS / seconds).toLocaleString('en-US')} keys/s (including key building)`,
  );
  return store;
}

// The smaller sizes first, their stores dropped; the largest one is kept for the eviction rounds below.
const KEYS = Math.max(...SIZES);
for (const size of SIZES) if (size !== KEYS) measure(size);
const store = measure(KEYS);

// At capacity every claim evicts the oldest completion. Measured in rounds, because a regression here grows
// with the number of evictions so far (a Map keeps the holes of deleted entries until it rehashes).
const EXTRA = KEYS;
const ROUND = EXTRA / 4;
const rounds = [];
for (let round = 0; round < 4; round++) {
  const roundStart = process.hrtime.bigint();
  for (let n = KEYS + round * ROUND; n < KEYS + (round + 1) * ROUND; n++) {
    const key = `live:${eventId(n)}`;
    const claim = store.claimSync(key, 60_000);
    store.completeSync(key, claim.token, 7 * 24 * 3600_000);
  }
  rounds.push(Number(process.hrtime.bigint() - roundStart) / 1e3 / ROUND);
}
if (store.size !== KEYS) throw new Error(`store holds ${store.size} keys at capacity, expected ${KEYS}`);
console.log(
  `at capacity (each claim evicts the oldest): ${rounds.map((us) => us.toFixed(2)).join(' / ')} µs per claim + complete, by quarter of ${EXTRA.toLocaleString('en-US')} more keys`,
);
