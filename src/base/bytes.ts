/**
 * Pure byte and text helpers with no runtime detection: the same code runs under Node, Bun, Deno and edge
 * runtimes. Anything that needs node:crypto or Web Crypto goes through a CryptoProvider instead.
 */
export type Bytes = Uint8Array;
/** Text (hashed as its UTF-8 bytes) or bytes. */
export type SignedPiece = string | Uint8Array;

const encoder = new TextEncoder();
// ignoreBOM keeps a leading byte order mark in the text, as Buffer#toString does: JSON.parse then refuses
// it instead of the body silently changing meaning.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

export function toBytes(data: SignedPiece): Bytes {
  return typeof data === 'string' ? encoder.encode(data) : data;
}

/** UTF-8 byte count of a string without encoding it (lone surrogates count 3, as TextEncoder writes U+FFFD). */
export function byteLength(data: SignedPiece): number {
  if (typeof data !== 'string') return data.byteLength;
  let bytes = data.length;
  for (let i = 0; i < data.length; i++) {
    const code = data.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(data.charCodeAt(i + 1))) {
      bytes += 2; // the pair is 2 UTF-16 units, 4 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** UTF-8 text of the raw body, for JSON.parse only: the signature was already checked over the bytes. */
export function utf8Text(body: SignedPiece): string {
  return typeof body === 'string' ? body : decoder.decode(body);
}

/** One buffer holding the parts in order; `total` when the caller already counted their bytes. */
export function concatBytes(parts: readonly Uint8Array[], total?: number): Bytes {
  let size = total ?? 0;
  if (total === undefined) for (const part of parts) size += part.byteLength;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

const hexDigits = '0123456789abcdef';

export function toHex(bytes: Bytes): string {
  let out = '';
  for (const byte of bytes) out += hexDigits[byte >> 4] + (hexDigits[byte & 15] as string);
  return out;
}

export function toBase64(bytes: Bytes): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** Standard base64, padding optional; undefined for anything else (so a caller can say what is wrong). */
export function fromBase64(text: string): Bytes | undefined {
  if (!BASE64.test(text)) return undefined;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function randomId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}
