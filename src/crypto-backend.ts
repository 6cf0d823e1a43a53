import type * as NodeCrypto from 'node:crypto';

/**
 * node:crypto when the runtime has it (Node, Bun, Deno), loaded without a static import so the core also
 * loads where it does not exist (Cloudflare Workers, Vercel Edge); there the async Web Crypto path is used.
 */
const node: typeof NodeCrypto | undefined = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as typeof NodeCrypto | undefined;

export type HashName = 'SHA-256' | 'SHA-384' | 'SHA-512';
export type Bytes = Uint8Array;
export type SignedPiece = string | Uint8Array;

const nodeHashName: Record<HashName, string> = {
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};
export const digestLength: Record<HashName, number> = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };

const encoder = new TextEncoder();

export const hasSyncCrypto = node !== undefined;

/** HMAC over the pieces in order, fed one by one so the body is never copied into a concatenation. */
export function hmacSync(hash: HashName, key: Bytes, pieces: readonly SignedPiece[]): Bytes {
  if (!node)
    throw new Error('node:crypto is not available in this runtime: use the async verification path.');
  const mac = node.createHmac(nodeHashName[hash], key);
  for (const piece of pieces) mac.update(piece);
  return mac.digest();
}

const keyCache = new WeakMap<Bytes, Map<HashName, Promise<CryptoKey>>>();

export async function hmacAsync(hash: HashName, key: Bytes, pieces: readonly SignedPiece[]): Promise<Bytes> {
  if (node) return hmacSync(hash, key, pieces);
  let byHash = keyCache.get(key);
  if (!byHash) {
    byHash = new Map();
    keyCache.set(key, byHash);
  }
  let cryptoKey = byHash.get(hash);
  if (!cryptoKey) {
    cryptoKey = crypto.subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash }, false, ['sign']);
    byHash.set(hash, cryptoKey);
  }
  const signature = await crypto.subtle.sign('HMAC', await cryptoKey, concat(pieces) as BufferSource);
  return new Uint8Array(signature);
}

/** SHA-256 of the body as lowercase hex: the dedupe key of an event that has no id. */
export async function sha256Hex(data: SignedPiece): Promise<string> {
  if (node) return node.createHash('sha256').update(data).digest('hex');
  const digest = await crypto.subtle.digest('SHA-256', toBytes(data) as BufferSource);
  return toHex(new Uint8Array(digest));
}

/** Constant-time comparison of two equal-length byte strings (length is not secret: it is the digest size). */
export function timingSafeEqual(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  if (node) return node.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

export function toBytes(data: SignedPiece): Bytes {
  return typeof data === 'string' ? encoder.encode(data) : data;
}

export function byteLength(data: SignedPiece): number {
  if (typeof data !== 'string') return data.byteLength;
  return node ? Buffer.byteLength(data, 'utf8') : encoder.encode(data).byteLength;
}

const hexDigits = '0123456789abcdef';

export function toHex(bytes: Bytes): string {
  let out = '';
  for (const byte of bytes) out += hexDigits[byte >> 4] + (hexDigits[byte & 15] as string);
  return out;
}

/**
 * Decodes hex of exactly `length` bytes (either case); undefined when it is not that.
 * A v1 that does not decode simply cannot match, so the caller answers signature_mismatch.
 */
export function fromHex(hex: string, length: number): Bytes | undefined {
  if (hex.length !== length * 2) return undefined;
  if (node) {
    // Buffer stops at the first invalid pair, so a short result means the text was not all hex.
    const bytes = Buffer.from(hex, 'hex');
    return bytes.length === length ? bytes : undefined;
  }
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return undefined;
    bytes[i] = (hi << 4) | lo;
  }
  return bytes;
}

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 32;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

function concat(pieces: readonly SignedPiece[]): Bytes {
  const parts = pieces.map(toBytes);
  let total = 0;
  for (const part of parts) total += part.byteLength;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

export function randomId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}

const decoder = new TextDecoder();

/** UTF-8 text of the raw body, for JSON.parse only: the signature was already checked over the bytes. */
export function utf8Text(body: SignedPiece): string {
  if (typeof body === 'string') return body;
  return node && Buffer.isBuffer(body) ? body.toString('utf8') : decoder.decode(body);
}
