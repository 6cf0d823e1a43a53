import { concatBytes, type SignedPiece, toBytes, toHex } from '../base/bytes.js';
import { type AsyncCryptoProvider, encodeDigest, type HashName } from './provider.js';

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
