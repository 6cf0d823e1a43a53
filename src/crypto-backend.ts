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

/**
 * A key ready for HMAC: under node:crypto a KeyObject, made once, so each HMAC skips importing the key
 * bytes again (measurably faster per call); elsewhere the bytes, imported once per hash by Web Crypto.
 */
export type HmacKey = Bytes | NodeCrypto.KeyObject;

export function prepareHmacKey(bytes: Bytes): HmacKey {
  return node ? node.createSecretKey(bytes) : bytes;
}

/**
 * A digest as bytes, or as a string of one char per byte (latin1): node:crypto hands out the string without
 * allocating a Buffer, which costs more than the HMAC of a 1 KiB body's last blocks.
 */
export type Digest = Bytes | string;

/** HMAC over the pieces in order, fed one by one so the body is never copied into a concatenation. */
export function hmacSync(hash: HashName, key: HmacKey, pieces: readonly SignedPiece[]): Digest {
  if (!node)
    throw new Error('node:crypto is not available in this runtime: use the async verification path.');
  const mac = node.createHmac(nodeHashName[hash], key);
  for (const piece of pieces) mac.update(piece);
  // 'binary' is Node's name for latin1 in this signature: one char per byte.
  return mac.digest('binary');
}

const keyCache = new WeakMap<Bytes, Map<HashName, Promise<CryptoKey>>>();

export async function hmacAsync(
  hash: HashName,
  key: HmacKey,
  pieces: readonly SignedPiece[],
): Promise<Digest> {
  if (node || !(key instanceof Uint8Array)) return hmacSync(hash, key, pieces);
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
  const signature = await crypto.subtle.sign(
    'HMAC',
    await cryptoKey,
    concatBytes(pieces.map(toBytes)) as BufferSource,
  );
  return new Uint8Array(signature);
}

/** SHA-256 of the body as lowercase hex: the dedupe key of an event that has no id. */
export async function sha256Hex(data: SignedPiece): Promise<string> {
  if (node) return node.createHash('sha256').update(data).digest('hex');
  const digest = await crypto.subtle.digest('SHA-256', toBytes(data) as BufferSource);
  return toHex(new Uint8Array(digest));
}

export function toBytes(data: SignedPiece): Bytes {
  return typeof data === 'string' ? encoder.encode(data) : data;
}

export function byteLength(data: SignedPiece): number {
  if (typeof data !== 'string') return data.byteLength;
  return node ? Buffer.byteLength(data, 'utf8') : encoder.encode(data).byteLength;
}

const hexDigits = '0123456789abcdef';

export function toHex(digest: Digest): string {
  if (typeof digest === 'string') return Buffer.from(digest, 'latin1').toString('hex');
  let out = '';
  for (const byte of digest) out += hexDigits[byte >> 4] + (hexDigits[byte & 15] as string);
  return out;
}

/** Bytes the hex decoder can write into: a Buffer under Node (so its native hex decoder applies), else plain. */
export function allocBytes(size: number): Bytes {
  return node ? Buffer.alloc(size) : new Uint8Array(size);
}

/**
 * Decodes `hex` (either case) into `target` at `offset`; false unless it is exactly `length` bytes of hex.
 * A v1 that does not decode simply cannot match, so the caller answers signature_mismatch.
 */
export function decodeHexInto(hex: string, target: Bytes, offset: number, length: number): boolean {
  if (hex.length !== length * 2) return false;
  // Buffer stops at the first invalid pair, so a short count means the text was not all hex.
  if (node && Buffer.isBuffer(target)) return target.write(hex, offset, length, 'hex') === length;
  for (let i = 0; i < length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return false;
    target[offset + i] = (hi << 4) | lo;
  }
  return true;
}

/**
 * Compares `expected` with the bytes of `candidates` at `offset` in constant time: the differences are OR-ed
 * together with no early exit. No subarray view is made, so nothing is allocated per comparison.
 */
export function timingSafeEqualAt(candidates: Bytes, offset: number, expected: Digest): boolean {
  let diff = 0;
  if (typeof expected === 'string') {
    for (let i = 0; i < expected.length; i++)
      diff |= (candidates[offset + i] as number) ^ expected.charCodeAt(i);
  } else {
    for (let i = 0; i < expected.length; i++)
      diff |= (candidates[offset + i] as number) ^ (expected[i] as number);
  }
  return diff === 0;
}

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 32;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
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

export function randomId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}

// Request ids only need to be unique, not secret: a random per-process prefix and a counter cost a string
// concatenation instead of a UUID per request.
const requestIdPrefix = `req_${randomId().slice(0, 16)}`;
let requestCounter = 0;

export function nextRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return requestIdPrefix + requestCounter.toString(16).padStart(16, '0');
}

const decoder = new TextDecoder();

/** UTF-8 text of the raw body, for JSON.parse only: the signature was already checked over the bytes. */
export function utf8Text(body: SignedPiece): string {
  if (typeof body === 'string') return body;
  // toString() without arguments is Node's direct UTF-8 path: no encoding lookup, no range checks.
  return node && Buffer.isBuffer(body) ? body.toString() : decoder.decode(body);
}
