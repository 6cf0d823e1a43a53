import { concatBytes } from '../base/bytes.js';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { Outcome } from './outcome.js';
import { BODY_TIMEOUT, BODY_TOO_LARGE, type ReceiveRequest } from './request.js';

/**
 * A route's parameters as a Fetch framework hands them: an object (SvelteKit's `event.params`, React Router's
 * `params`, h3's `event.context.params`), or a promise of one (Next.js 15 on: the route handler's
 * `context.params`).
 */
export type WebRouteParams = ReceiveRequest['params'] | PromiseLike<ReceiveRequest['params']>;

/**
 * What readWebBody reads of a request: a Fetch `Request`, or a platform's own request shaped like one (Azure
 * Functions' HttpRequest).
 */
export interface WebBodySource {
  readonly headers: { get(name: string): string | null };
  readonly bodyUsed: boolean;
  readonly body: { getReader(): WebBodyReader } | null;
  /** The whole body (every Fetch `Request` has it); read instead of `body` when the length is declared. */
  arrayBuffer?(): Promise<ArrayBuffer>;
}

/** A Web stream's reader, as readWebBody uses it (written out: Node's stream/web and the DOM type it apart). */
export interface WebBodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
  cancel(): Promise<void>;
}

type WebBody = Uint8Array | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT | undefined;

/**
 * Reads a Fetch `Request` body under `maxBytes` and `deadlineMs`. A Content-Length over the limit is refused
 * before a byte is read; a body of a declared length within it is read whole (declaredBody). A body of no
 * declared length is read as it streams in and stops once it passes `maxBytes` (the rest is cancelled, never
 * buffered). A body not complete within `deadlineMs` resolves BODY_TIMEOUT. A body something else already
 * read resolves to undefined at once: the core answers body_already_parsed.
 */
export async function readWebBody(
  request: WebBodySource,
  maxBytes: number,
  deadlineMs: number,
): Promise<Uint8Array | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT | undefined> {
  const length = request.headers.get('content-length');
  if (Number(length) > maxBytes) return BODY_TOO_LARGE;
  if (request.bodyUsed) return undefined;
  if (length !== null && typeof request.arrayBuffer === 'function') {
    return declaredBody(request.arrayBuffer(), maxBytes, deadlineMs);
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const read = await withTimeout(readAll(reader, maxBytes), deadlineMs);
  return read === TIMED_OUT ? stop(reader, BODY_TIMEOUT) : read;
}

/**
 * A body of declared length, read whole by the runtime: its HTTP server ends a body at its Content-Length, already
 * checked against the limit, and a Node bridge (@hono/node-server, h3's srvx) reads it from the Node stream
 * without making the Web stream that `request.body` costs. Past the deadline the read goes on unawaited: the
 * answer (408) closes the connection, which ends it.
 */
async function declaredBody(
  reading: Promise<ArrayBuffer>,
  maxBytes: number,
  deadlineMs: number,
): Promise<WebBody> {
  const read = await withTimeout(reading, deadlineMs);
  if (read === TIMED_OUT) return BODY_TIMEOUT;
  // A Request made in process may declare a length its body does not keep to.
  return read.byteLength > maxBytes ? BODY_TOO_LARGE : new Uint8Array(read);
}

/** Every chunk of the stream, or BODY_TOO_LARGE once they pass `maxBytes` (the rest is cancelled). */
async function readAll(reader: WebBodyReader, maxBytes: number): Promise<Uint8Array | typeof BODY_TOO_LARGE> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    const chunk = next.value;
    if (chunk === undefined) continue;
    size += chunk.byteLength;
    if (size > maxBytes) return stop(reader, BODY_TOO_LARGE);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, size);
}

function stop<T>(reader: WebBodyReader, answer: T): T {
  // Not awaited: a client that stalls must not keep the answer waiting.
  reader.cancel().catch(() => {});
  return answer;
}

/** What a Fetch platform hands a handler besides the request (see webRequest). */
export interface WebRequestContext {
  /** The route's parameters as the framework matched them: an object, or a promise of one (Next.js 15 on). */
  params?: WebRouteParams;
  /** Keeps the runtime alive for work that outlives the response (Workers', Vercel's `waitUntil`). */
  waitUntil?(work: Promise<unknown>): void;
}

/**
 * The receiver's request over a Fetch `Request` (or a platform's request shaped like one): its body read as it
 * streams in, under the receiver's limits. `hint` is the platform's fix for a body something else read first.
 */
export function webRequest(
  request: WebBodySource & { readonly method: string; readonly url: string },
  hint: string,
  context?: WebRequestContext,
): ReceiveRequest | Promise<ReceiveRequest> {
  const received: ReceiveRequest = {
    method: request.method,
    headers: request.headers,
    url: request.url,
    readBody: (maxBytes, deadlineMs) => readWebBody(request, maxBytes, deadlineMs),
    rawBodyHint: hint,
  };
  const waitUntil = context?.waitUntil;
  // Called as a method: Workers' ctx.waitUntil needs its `this`.
  if (typeof waitUntil === 'function') received.waitUntil = (work) => context?.waitUntil?.(work);
  const params = context?.params;
  // Awaited only when it is a promise: a plain object is taken as it is.
  if (typeof (params as PromiseLike<unknown> | undefined)?.then !== 'function') {
    if (params) received.params = params as ReceiveRequest['params'];
    return received;
  }
  return Promise.resolve(params).then((given) => {
    if (given) received.params = given;
    return received;
  });
}

/** The outcome as a Fetch `Response`, as it is: the core already chose status, headers and body. */
export function toWebResponse(outcome: Outcome): Response {
  return new Response(outcome.body, { status: outcome.status, headers: outcome.headers });
}
