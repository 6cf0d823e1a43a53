import type { Outcome } from './outcome.js';

/** Headers as any runtime has them: a Fetch `Headers`, or Node's object (lowercase keys, arrays for repeats). */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * What a body reader returns when the body grew past the limit: it stopped reading, the core answers 413.
 * From the global symbol registry, so that an adapter and a receiver loaded from two copies of the package
 * (a bundler splitting routes, a receiver shared on globalThis) still agree on it.
 */
export const BODY_TOO_LARGE: unique symbol = Symbol.for('messaging-webhooks.body-too-large');

/**
 * What a body reader returns when the body was not complete `deadlineMs` after reading started (a client
 * trickling bytes, or one that sent fewer bytes than its Content-Length and waits): the core answers 408
 * and the connection is closed. A global symbol for the same reason as BODY_TOO_LARGE.
 */
export const BODY_TIMEOUT: unique symbol = Symbol.for('messaging-webhooks.body-timeout');

/**
 * What a body reader returns when the body ended at another length than its Content-Length declared: the
 * core answers 400 content_length_mismatch. A global symbol for the same reason as BODY_TOO_LARGE.
 */
export const BODY_LENGTH_MISMATCH: unique symbol = Symbol.for('messaging-webhooks.body-length-mismatch');

/**
 * What a body reader gives: the bytes, or why there are none (`undefined`: something else already read the
 * stream, answered 500 body_already_parsed).
 */
export type BodyRead =
  | Uint8Array
  | string
  | typeof BODY_TOO_LARGE
  | typeof BODY_TIMEOUT
  | typeof BODY_LENGTH_MISMATCH
  | undefined;

/**
 * Reads the body as it streams in, stops past `maxBytes`, and gives up (BODY_TIMEOUT) when the body is not
 * complete within `deadlineMs`. Called by the core only after the cheap checks (method, content type)
 * passed, so a rejected request's body is never buffered. Rejects when the client went away mid-body. A body
 * already complete in hand may be returned as it is: the core then takes it without a promise.
 */
export type BodyReader = (maxBytes: number, deadlineMs: number) => BodyRead | PromiseLike<BodyRead>;

/** The neutral shape every adapter turns its framework's request into: `rawBody` or `readBody`, not both. */
export interface ReceiveRequest {
  method: string;
  headers: HeaderSource;
  /** The request target as received, a path (`/webhooks?x=1`) or an absolute URL: for tracing only. */
  url?: string;
  /** The route template the framework matched (`/webhooks`), when it has one: for tracing only. */
  route?: string;
  /**
   * The route's parameters as the framework matched them (`/webhooks/:account` → `{ account: 'acme' }`), for the
   * receiver's `tenant` option. Adapters pass them as they are; `{}` or absent when the route has none.
   */
  params?: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received. Anything else (a parsed object) is answered 500 body_already_parsed. */
  rawBody?: Uint8Array | string | unknown;
  /** For streams: the core calls it when it needs the body (see BodyReader). */
  readBody?: BodyReader;
  /** How to fix the mounting in this framework: ends the body_already_parsed message when the body is not bytes. */
  rawBodyHint?: string;
  /**
   * The id this request is answered and logged under (`req_…`), when the caller already gave it one, for
   * example to find its own data for the request again in a handler through ctx.requestId. Default: a new id.
   */
  requestId?: string;
  /** Serverless platforms: keeps the runtime alive for work that outlives the response (ack: 'async'). */
  waitUntil?: (work: Promise<unknown>) => void;
}

/** Case-insensitive lookup; repeated headers are joined with a comma as HTTP allows. */
export function getHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    // Node's own header objects have lower-case keys, but a caller may ask for `Content-Type`, and a hand-made
    // object may hold any case.
    const wanted = name.toLowerCase();
    for (const key in record) {
      if (key.toLowerCase() === wanted) {
        value = record[key];
        break;
      }
    }
  }
  return typeof value === 'string' || value === undefined ? value : value.join(',');
}

/** application/json, or any structured-syntax +json type, parameters ignored. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  if (value === 'application/json') return true;
  const semicolon = value.indexOf(';');
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** What an adapter needs of a receiver: its `receive`. */
export interface RequestReceiver {
  receive(request: ReceiveRequest): Promise<Outcome>;
}

/**
 * One request of an adapter, served: read into the neutral request, received, its outcome written. The adapter
 * kit makes it once per adapter, so that a delivery runs it here, beside the request it reads.
 */
export function serving<Args extends unknown[], Result>(
  receiver: RequestReceiver,
  read: (...args: Args) => ReceiveRequest | PromiseLike<ReceiveRequest>,
  write: (outcome: Outcome, ...args: Args) => Result,
): (...args: Args) => Promise<Result> {
  return async (...args) => {
    const given = read(...args);
    // Awaited only when it is a promise: a request read at once goes on without waiting.
    const request =
      typeof (given as PromiseLike<ReceiveRequest>).then === 'function'
        ? await given
        : (given as ReceiveRequest);
    const outcome = await receiver.receive(request);
    return write(outcome, ...args);
  };
}
