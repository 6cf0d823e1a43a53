import { nodeCryptoProvider } from './node.js';
import type { CryptoProvider } from './provider.js';
import { webCryptoProvider } from './web.js';

let chosen: CryptoProvider | undefined;

/**
 * node:crypto where the runtime has it (Node, Bun, Deno: synchronous, and faster), else Web Crypto (Cloudflare
 * Workers, Vercel Edge). Decided on the first call and kept: nothing downstream looks at the runtime again.
 */
export function defaultCryptoProvider(): CryptoProvider {
  chosen ??= nodeCryptoProvider() ?? webCryptoProvider();
  return chosen;
}
