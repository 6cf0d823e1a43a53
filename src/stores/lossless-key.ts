/** A UTF-16 surrogate without its pair, which UTF-8 cannot spell (an encoder writes U+FFFD for each). */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The key as a store that encodes its keys as UTF-8 (Redis, Deno KV, Durable Objects) holds it. A key with a
 * lone surrogate (from an event id or a tenant a sender chose) would lose it there, and two keys that differ
 * only in one would be one key: such a key is stored as its JSON string, quotes included, which escapes each
 * lone surrogate (`\ud800`). One-to-one with the key, and apart from every other key the receiver makes, each of
 * which starts with its mode or `tenant:`, never a quote. Every other key is stored as it is.
 */
export function wellFormedKey(key: string): string {
  return LONE_SURROGATE.test(key) ? JSON.stringify(key) : key;
}
