import { concatBytes } from '../src/crypto-backend.js';
import { BODY_TOO_LARGE, type Outcome } from '../src/index.js';

/**
 * Reads a Fetch `Request` body as it streams in and stops once it passes `maxBytes` (the rest is cancelled,
 * never buffered). A Content-Length over the limit is refused before a byte is read. A body something else
 * already read resolves to undefined at once: the core answers body_already_parsed.
 */
export async function readWebBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | typeof BODY_TOO_LARGE | undefined> {
  if (Number(request.headers.get('content-length')) > maxBytes) return BODY_TOO_LARGE;
  if (request.bodyUsed) return undefined;
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Not awaited: a client that stalls must not keep the answer waiting.
      reader.cancel().catch(() => {});
      return BODY_TOO_LARGE;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, size);
}

/** The outcome as a Fetch `Response`, as it is: the core already chose status, headers and body. */
export function toWebResponse(outcome: Outcome): Response {
  return new Response(outcome.body, { status: outcome.status, headers: outcome.headers });
}
