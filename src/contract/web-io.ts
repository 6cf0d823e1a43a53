import { concatBytes } from '../base/bytes.js';
import type { Outcome } from './outcome.js';
import { BODY_TIMEOUT, BODY_TOO_LARGE } from './request.js';

/**
 * Reads a Fetch `Request` body as it streams in and stops once it passes `maxBytes` (the rest is cancelled,
 * never buffered). A Content-Length over the limit is refused before a byte is read. A body not complete
 * within `deadlineMs` resolves BODY_TIMEOUT, its stream cancelled. A body something else already read
 * resolves to undefined at once: the core answers body_already_parsed.
 */
export async function readWebBody(
  request: Request,
  maxBytes: number,
  deadlineMs: number,
): Promise<Uint8Array | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT | undefined> {
  if (Number(request.headers.get('content-length')) > maxBytes) return BODY_TOO_LARGE;
  if (request.bodyUsed) return undefined;
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof BODY_TIMEOUT>((resolve) => {
    timer = setTimeout(() => resolve(BODY_TIMEOUT), deadlineMs);
  });
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === BODY_TIMEOUT) return stop(reader, BODY_TIMEOUT);
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) return stop(reader, BODY_TOO_LARGE);
      chunks.push(next.value);
    }
    return chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, size);
  } finally {
    clearTimeout(timer);
  }
}

function stop<T>(reader: ReadableStreamDefaultReader<Uint8Array>, answer: T): T {
  // Not awaited: a client that stalls must not keep the answer waiting.
  reader.cancel().catch(() => {});
  return answer;
}

/** The outcome as a Fetch `Response`, as it is: the core already chose status, headers and body. */
export function toWebResponse(outcome: Outcome): Response {
  return new Response(outcome.body, { status: outcome.status, headers: outcome.headers });
}
