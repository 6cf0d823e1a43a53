import { concatBytes, type SignedPiece, toBase64, toBytes, toHex } from '../base/bytes.js';
import { nodeCryptoProvider } from './node.js';

export type HashName = 'SHA-256' | 'SHA-384' | 'SHA-512';
export type DigestEncoding = 'hex' | 'base64';

export const digestLength: Record<HashName, number> = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };

interface ProviderBase {
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

interface WebKey {
  readonly bytes: Uint8Array;
  readonly hash: HashName;
  imported?: Promise<CryptoKey>;
}

/** Web Crypto (`crypto.subtle`): every runtime has it; async, so the verifier returns promises. */
export function webCryptoProvider(): AsyncCryptoProvider {
  const subtle = globalThis.crypto.subtle;
  return {
    name: 'web-crypto',
    sync: false,
    prepareKey: (bytes, hash): WebKey => ({ bytes, hash }),
    async hmac(key, hash, pieces, encoding) {
      const web = key as WebKey;
      if (web.hash !== hash) throw new Error(`The key was prepared for ${web.hash}, not ${hash}.`);
      // Imported on first use, once: a key that is never used costs nothing.
      web.imported ??= subtle.importKey('raw', web.bytes as BufferSource, { name: 'HMAC', hash }, false, [
        'sign',
      ]);
      const content =
        pieces.length === 1 ? toBytes(pieces[0] as SignedPiece) : concatBytes(pieces.map(toBytes));
      const signature = await subtle.sign('HMAC', await web.imported, content as BufferSource);
      return encodeDigest(new Uint8Array(signature), encoding);
    },
    async sha256Hex(data) {
      return toHex(new Uint8Array(await subtle.digest('SHA-256', toBytes(data) as BufferSource)));
    },
  };
}

let chosen: CryptoProvider | undefined;

/**
 * node:crypto where the runtime has it (Node, Bun, Deno: synchronous, and faster), else Web Crypto (Cloudflare
 * Workers, Vercel Edge). Decided on the first call and kept: nothing downstream looks at the runtime again.
 */
export function defaultCryptoProvider(): CryptoProvider {
  chosen ??= nodeCryptoProvider() ?? webCryptoProvider();
  return chosen;
}
