import { concatBytes } from '../base/bytes.js';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { Outcome } from './outcome.js';
import {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  type BodyRead,
  type BodyReader,
  type HeaderSource,
  type ReceiveRequest,
} from './request.js';

/**
 * The parts of Node's `IncomingMessage` the Node adapters read. Written out rather than imported from node:http,
 * so that this entry's types hold for a project without @types/node.
 */
export interface NodeRequestLike {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly httpVersionMajor: number;
  readonly readableFlowing: boolean | null;
  readonly readableLength: number;
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  readonly complete: boolean;
  read(): unknown;
  resume(): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: a stream's listeners take whatever its events carry
  on(event: string, listener: (...args: any[]) => void): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: as for on()
  off(event: string, listener: (...args: any[]) => void): unknown;
}

/** The parts of Node's `ServerResponse` an outcome is written with. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/** Where a Node request's body is: bytes in hand, or the stream, plus the framework's fix for a parsed body. */
export type NodeBodySource = Pick<ReceiveRequest, 'rawBody' | 'readBody' | 'rawBodyHint'>;

/**
 * How a framework names a Node request, each asked only when something reads it: the URL and route template
 * for tracing, the route's parameters for the receiver's `tenant` option.
 */
export interface NodeRequestParts<R extends NodeRequestLike> {
  /** Where the body is (nodeBody). Default: the stream, read by the receiver under its limits. */
  body?: NodeBodySource;
  /** The request target as received. Default: `req.url`. */
  url?(req: R): string | undefined;
  /** The route template the framework matched. Default: none. */
  route?(req: R): string | undefined;
  /** The route's parameters as the framework matched them. Default: none. */
  params?(req: R): ReceiveRequest['params'];
}

/**
 * Where a Node framework left the body: the bytes a parser kept (`kept`: a `rawBody`), what it left in its
 * place (`parsed`: bytes or text are the body as sent; an object is not, answered 500 body_already_parsed with
 * `hint`, the framework's fix), or the stream when no parser read it (a parser that skipped the request left
 * it unread).
 */
export function nodeBody(
  req: NodeRequestLike,
  found: { kept?: unknown; parsed?: unknown; hint: string },
): NodeBodySource {
  const { kept, parsed, hint } = found;
  if (kept instanceof Uint8Array) return { rawBody: kept };
  if (parsed instanceof Uint8Array || typeof parsed === 'string') return { rawBody: parsed };
  if (parsed !== undefined && parsed !== null && req.readableEnded)
    return { rawBody: parsed, rawBodyHint: hint };
  return { readBody: nodeBodyReader(req), rawBodyHint: hint };
}

/**
 * The receiver's request over a Node request. With the body still in the stream it is given once the request
 * event is over: within the event, the body that came with the headers has not reached the stream yet; after
 * it, Node's parser has put it all in the stream's buffer, where the body reader takes it at once.
 */
export function nodeRequest<R extends NodeRequestLike>(
  req: R,
  parts: NodeRequestParts<R> = {},
): ReceiveRequest | Promise<ReceiveRequest> {
  const request = new NodeRequest(req, parts.body ?? { readBody: nodeBodyReader(req) }, parts);
  return request.readBody ? PAST_THE_REQUEST_EVENT.then(() => request) : request;
}

const PAST_THE_REQUEST_EVENT = Promise.resolve();

/**
 * One class, so the core sees one shape from every Node adapter. `url`, `route` and `params` are read from
 * `req` only when asked: Express gives each request object a hidden class of its own (it changes the
 * object's prototype), so every property read from `req` misses V8's inline caches.
 */
class NodeRequest<R extends NodeRequestLike> implements ReceiveRequest {
  readonly method: string;
  readonly headers: HeaderSource;
  readonly rawBody: unknown;
  readonly readBody: ReceiveRequest['readBody'];
  readonly rawBodyHint: string | undefined;
  readonly #req: R;
  readonly #parts: NodeRequestParts<R>;

  constructor(req: R, body: NodeBodySource, parts: NodeRequestParts<R>) {
    this.method = req.method ?? 'GET';
    this.headers = req.headers;
    this.rawBody = body.rawBody;
    this.readBody = body.readBody;
    this.rawBodyHint = body.rawBodyHint;
    this.#req = req;
    this.#parts = parts;
  }

  get url(): string | undefined {
    return this.#parts.url ? this.#parts.url(this.#req) : this.#req.url;
  }

  get route(): string | undefined {
    return this.#parts.route?.(this.#req);
  }

  get params(): ReceiveRequest['params'] {
    return this.#parts.params?.(this.#req);
  }
}

/** The core's BodyReader over a Node request stream. */
export function nodeBodyReader(req: NodeRequestLike): BodyReader {
  return (maxBytes, deadlineMs) => readNodeBody(req, maxBytes, deadlineMs);
}

type NodeBody = Uint8Array | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT | typeof BODY_LENGTH_MISMATCH;

/**
 * Reads a Node request body as it streams in and stops once it passes `maxBytes`: an oversized body is never
 * buffered whole. A Content-Length over the limit is refused before a byte is read. A body not complete
 * within `deadlineMs` resolves BODY_TIMEOUT (the rest is not read; the answer closes the connection).
 * A stream something else already read to its end resolves to undefined at once (never waits for an `end`
 * that was already emitted): the core answers body_already_parsed. A body already all in the stream's buffer
 * is returned as it is, with no promise.
 */
export function readNodeBody(
  req: NodeRequestLike,
  maxBytes: number,
  deadlineMs: number,
): BodyRead | Promise<BodyRead> {
  const contentLength = req.headers['content-length'];
  const declared = contentLength === undefined ? undefined : Number(contentLength);
  if (declared !== undefined && declared > maxBytes) return BODY_TOO_LARGE;
  // A body all in the stream's buffer is taken whole, with no promise, timer, listener or stream event.
  const buffered = bufferedBody(req, declared);
  if (buffered) return buffered;
  // Node's parser goes on to the body right after the request event: once that event is over, a body that
  // came with its headers is all in the buffer.
  return Promise.resolve(declared).then(
    (length) => bufferedBody(req, length) ?? unbufferedBody(req, maxBytes, deadlineMs, length),
  );
}

/**
 * The whole body when it is already buffered: HTTP/1 only, where the parser hands over exactly Content-Length
 * bytes, so a buffer of that length is the complete body and nothing can follow it. Only what this needs is
 * read from `req`: on Express every read from `req` is an inline-cache miss.
 */
function bufferedBody(req: NodeRequestLike, declared: number | undefined): Uint8Array | undefined {
  if (declared === undefined || declared === 0 || req.httpVersionMajor !== 1) return undefined;
  if (req.readableFlowing || req.readableLength !== declared) return undefined;
  const body = req.read() as Uint8Array | null;
  if (body === null) return undefined;
  // Flowing with nothing listening lets the stream end by itself once the parser has marked it complete.
  req.resume();
  return body;
}

/** A body not in the buffer: none left (something else read it), or one still coming. */
function unbufferedBody(
  req: NodeRequestLike,
  maxBytes: number,
  deadlineMs: number,
  declared: number | undefined,
): Promise<NodeBody | undefined> {
  // Never wait for an `end` that was already emitted.
  if (req.readableEnded) return Promise.resolve(undefined);
  if (req.destroyed) return Promise.reject(new Error('The request stream was destroyed before it was read.'));
  return streamedBody(req, maxBytes, deadlineMs, declared);
}

/** Reads the rest of a body as it streams in, under the body deadline. */
function streamedBody(
  req: NodeRequestLike,
  maxBytes: number,
  deadlineMs: number,
  declared: number | undefined,
): Promise<NodeBody | undefined> {
  let stopReading = () => {};
  const reading = new Promise<NodeBody>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const finish = (body: NodeBody) => {
      // Stop reading; the answer closes the connection, so the rest is never read.
      cleanup();
      resolve(body);
    };
    const onData = (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > maxBytes) finish(BODY_TOO_LARGE);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      // Node's HTTP/1 parser ends a body at its Content-Length; other transports may not hold to it.
      if (declared !== undefined && declared !== size) return finish(BODY_LENGTH_MISMATCH);
      finish(chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      if (req.complete) return;
      cleanup();
      reject(new Error('The client closed the connection before the body was complete.'));
    };
    stopReading = cleanup;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
  // Past the deadline the rest is not read: the answer (408) closes the connection.
  return withTimeout(reading, deadlineMs).then((body) => {
    if (body !== TIMED_OUT) return body;
    stopReading();
    return BODY_TIMEOUT;
  });
}

/** Writes an outcome to a Node response as it is: the core already chose status, headers and body. */
export function writeNodeOutcome(res: NodeResponseLike, outcome: Outcome): void {
  // An answer to a body left unread carries `connection: close`, which makes Node close the connection.
  res.writeHead(outcome.status, outcome.headers);
  res.end(outcome.body);
}
