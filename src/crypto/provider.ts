import { type SignedPiece, toBase64, toHex } from '../base/bytes.js';

export type HashName = 'SHA-256' | 'SHA-384' | 'SHA-512';
export type DigestEncoding = 'hex' | 'base64';

export const digestLength: Record<HashName, number> = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };

/** What every crypto provider has, synchronous or not. */
export interface ProviderBase {
  /** `node:crypto`, `web-crypto`, or your own: names the provider in diagnostics and errors. */
  readonly name: string;
  /**
   * Turns raw key bytes into whatever the provider's HMAC takes fastest, once per secret and hash. The result
   * is opaque: only the same provider's `hmac` reads it.
   */
  prepareKey(key: Uint8Array, hash: HashName): unknown;
}

/** HMACs and hashes answered synchronously (node:crypto): the verifier then never returns a promise. */
export interface SyncCryptoProvider extends ProviderBase {
  readonly sync: true;
  /** HMAC over the pieces in order (fed one by one: the body is never copied), encoded as asked. */
  hmac(key: unknown, hash: HashName, pieces: readonly SignedPiece[], encoding: DigestEncoding): string;
  /** SHA-256 as lowercase hex: the dedupe key of an event that has no id. */
  sha256Hex(data: SignedPiece): string;
}

/** HMACs and hashes that resolve later (Web Crypto). */
export interface AsyncCryptoProvider extends ProviderBase {
  readonly sync: false;
  hmac(
    key: unknown,
    hash: HashName,
    pieces: readonly SignedPiece[],
    encoding: DigestEncoding,
  ): Promise<string>;
  sha256Hex(data: SignedPiece): Promise<string>;
}

/** The crypto the pipeline uses, passed in (`crypto` option) or chosen once by defaultCryptoProvider(). */
export type CryptoProvider = SyncCryptoProvider | AsyncCryptoProvider;

export function encodeDigest(bytes: Uint8Array, encoding: DigestEncoding): string {
  return encoding === 'hex' ? toHex(bytes) : toBase64(bytes);
}
