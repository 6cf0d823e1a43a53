/**
 * A fresh claim owner token. Random rather than a counter: tokens of several processes meet in one
 * shared store, and a restarted process must never reuse the token of a claim it made before the crash.
 */
export function newOwnerToken(): string {
  return globalThis.crypto.randomUUID();
}
