import { type NodeRequestLike, nodeBodyReader } from './node-io.js';
import type { HeaderSource, ReceiveRequest } from './request.js';

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
 * The receiver's request over a Node request. With the body still in the stream it is given a microtask
 * later: within the request event the body that came with the headers has not reached the stream yet, and once
 * the event is over Node's parser has put it all in the stream's buffer, where the body reader takes it at once.
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
