/** Crockford base32, as in ULIDs: the service's ids are a prefix and 26 of these. */
const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * An id in the service's style, a prefix and a ULID (`evt_01J…`): 10 characters of the time in milliseconds,
 * then 16 random ones (80 bits). Ids made in different milliseconds sort by time; within one they are in no
 * order. (Request ids are the receiver's own: nextRequestId.)
 */
export function createId(prefix: 'evt_' | 'msg_' | (string & {})): string {
  let time = Date.now();
  let stamp = '';
  for (let i = 0; i < 10; i++) {
    stamp = ULID_ALPHABET[time % 32] + stamp;
    time = Math.floor(time / 32);
  }
  let out = prefix + stamp;
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) out += ULID_ALPHABET[byte & 31];
  return out;
}

/** A phone number in international format from a range reserved for fiction (+1 555 01xx…). */
export function createPhoneNumber(): string {
  const [a = 0, b = 0] = crypto.getRandomValues(new Uint16Array(2));
  return `+1555${String(a % 1000).padStart(3, '0')}${String(b % 10000).padStart(4, '0')}`;
}

/** Now, as the service writes timestamps: ISO 8601 with an explicit UTC offset. */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}
