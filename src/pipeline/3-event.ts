import { flatJoin, type SignedPiece, utf8Text } from '../base/bytes.js';
import type { DeliveryContext, ErrorContext, HandlerContext } from '../contract/context.js';
import type { CryptoProvider } from '../crypto/provider.js';
import type { ParsedEvent } from '../events/catalogue.js';
import type { Mode } from '../signature/secrets.js';
import type { Verifier } from '../signature/verifier.js';
import type { Verified } from './2-verify.js';
import type { Rejection } from './ending.js';

/** A verified request whose body is an event of the catalogue (or of a type it does not know). */
export interface Parsed extends Verified {
  readonly event: { type: string; id?: string };
}

const INVALID_JSON: Rejection = { stop: 'invalid_json' };

/**
 * JSON, then the event's schema. A UTF-8 byte order mark before the JSON text is ignored (RFC 8259 lets a
 * parser do so), the same whatever the body's form: Node's Buffer decoding keeps the mark and TextDecoder drops
 * it, so without one rule the same signed bytes would get different answers in different runtimes.
 */
export function parse(verified: Verified, parseEvent: (value: unknown) => ParsedEvent): Parsed | Rejection {
  let json: unknown;
  try {
    json = JSON.parse(jsonText(verified.body));
  } catch {
    return INVALID_JSON;
  }
  const parsed = parseEvent(json);
  if (parsed.ok) {
    const { request, requestId, body, mode, timestamp, messageId, tenant } = verified;
    return { request, requestId, body, mode, timestamp, messageId, tenant, event: parsed.event };
  }
  const paths = parsed.issues.map((issue) => issue.path || '(body)').join(', ');
  return {
    stop: 'invalid_event',
    message: `The event does not match its schema at: ${paths}.`,
    issues: parsed.issues,
  };
}

function jsonText(body: SignedPiece): string {
  if (typeof body === 'string') return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return utf8Text(bom ? body.subarray(3) : body);
}

/** A parsed event under the key it is deduplicated by, with what onError and its handlers are told of it. */
export interface Keyed extends Parsed {
  /**
   * `<mode>:<event id>`, or `<mode>:sha256:<hex>` of what the sender signed when the event has no id; with a
   * tenant, `tenant:<the tenant, encoded>:` before it (see tenantKey).
   */
  readonly key: string;
  /** What onError is told of this event. */
  readonly context: ErrorContext;
  /** What its handlers are told, built once: the receiver runs them with it, or a durable job carries it. */
  readonly handlerContext: DeliveryContext;
}

/** What the key of an event without an id is computed from: the verifier's crypto and its signed content. */
export type SignedContent = Pick<Verifier, 'crypto' | 'signedBody'>;

/** Keys the event per mode: a test event never answers as a duplicate of a live one. */
export function dedupeKey(parsed: Parsed, signed: SignedContent): Keyed | Promise<Keyed> {
  const { tenant } = parsed;
  if (tenant === undefined) return keyUnder(parsed, signed, parsed.mode);
  const start = tenantKey(tenant, parsed.mode, signed.crypto);
  return typeof start === 'string'
    ? keyUnder(parsed, signed, start)
    : start.then((hashed) => keyUnder(parsed, signed, hashed));
}

function keyUnder(parsed: Parsed, signed: SignedContent, mode: string): Keyed | Promise<Keyed> {
  const { event } = parsed;
  // Flat: the memory store keeps the key for the whole retention period.
  if (typeof event.id === 'string') return keyed(parsed, flatJoin([mode, event.id], ':'));
  const body = signed.signedBody({ headers: parsed.request.headers, body: parsed.body });
  const key = signedContentKey(signed.crypto, mode, body);
  return typeof key === 'string' ? keyed(parsed, key) : key.then((hashed) => keyed(parsed, hashed));
}

/** The longest tenant part a key holds as it is: any tenant of ASCII letters and digits fits. */
export const MAX_TENANT_KEY_PART = 256;

/**
 * The start of a tenant's keys: `tenant:<tenant>:<mode>`, the tenant URI-encoded so that it holds no `:` and
 * ends where its encoding ends. A key without a tenant starts with its mode (`live:`, `test:`), never `tenant:`,
 * so no tenant's key equals another's or one of a receiver without tenants. Whatever the tenant holds: a lone
 * surrogate, which URI encoding refuses, is written `%uD800` (URI encoding never writes `%u`), and a tenant
 * whose encoding is longer than MAX_TENANT_KEY_PART is written `#` and the SHA-256 of its encoding (URI
 * encoding writes `#` as `%23`), so that every key fits every store (Deno KV keys stop at 2 KiB).
 */
export function tenantKey(tenant: string, mode: Mode, crypto: CryptoProvider): string | Promise<string> {
  const encoded = encodeTenant(tenant);
  if (encoded.length <= MAX_TENANT_KEY_PART) return `tenant:${encoded}:${mode}`;
  if (crypto.sync) return `tenant:#${crypto.sha256Hex(encoded)}:${mode}`;
  return crypto.sha256Hex(encoded).then((hash) => `tenant:#${hash}:${mode}`);
}

const LONE_SURROGATE = /\p{Cs}/u;
/** A lone surrogate, or a run of anything else (a surrogate pair is one code point, not Cs). */
const CHUNKS = /\p{Cs}|\P{Cs}+/gu;

function encodeTenant(tenant: string): string {
  if (!LONE_SURROGATE.test(tenant)) return encodeURIComponent(tenant);
  return tenant.replace(CHUNKS, (chunk) =>
    LONE_SURROGATE.test(chunk)
      ? `%u${chunk.charCodeAt(0).toString(16).toUpperCase()}`
      : encodeURIComponent(chunk),
  );
}

/**
 * The dedupe key of an event without an id: the SHA-256 of what the sender signed, per mode. Not of the raw
 * body: a body signature's member can be re-spelled (hex case, its place, a repeated v1) without changing what
 * was signed, and each spelling would otherwise run the handlers again.
 */
function signedContentKey(crypto: CryptoProvider, mode: string, body: SignedPiece): string | Promise<string> {
  if (crypto.sync) return `${mode}:sha256:${crypto.sha256Hex(body)}`;
  return crypto.sha256Hex(body).then((hash) => `${mode}:sha256:${hash}`);
}

function keyed(parsed: Parsed, key: string): Keyed {
  const { event } = parsed;
  const context: ErrorContext = {
    requestId: parsed.requestId,
    reason: 'handler_failed',
    eventType: event.type,
    mode: parsed.mode,
  };
  if (event.id !== undefined) context.eventId = event.id;
  const { request, requestId, body, mode, timestamp, messageId, tenant } = parsed;
  if (tenant !== undefined) context.tenant = tenant;
  const handlerContext = deliveryContext(parsed, key);
  return {
    request,
    requestId,
    body,
    mode,
    timestamp,
    messageId,
    tenant,
    event,
    key,
    context,
    handlerContext,
  };
}

/**
 * The one place a handler's context is built from a verified delivery, so the direct path and the job a
 * worker runs carry the same fields (a durable job keeps it as JSON: only fields that are set appear).
 */
export function deliveryContext(verified: Verified, dedupeKey: string): DeliveryContext {
  const context: DeliveryContext = {
    requestId: verified.requestId,
    mode: verified.mode,
    timestamp: verified.timestamp,
    dedupeKey,
  };
  if (verified.messageId !== undefined) context.messageId = verified.messageId;
  if (verified.tenant !== undefined) context.tenant = verified.tenant;
  return context;
}

/** The context a handler run gets: the delivery's, with the store's transaction (a literal: no spread per run). */
export function withTransaction<Tx>(context: DeliveryContext, tx: Tx): Omit<HandlerContext<Tx>, 'attempt'> {
  const { requestId, mode, timestamp, dedupeKey, messageId, tenant } = context;
  return { requestId, mode, timestamp, dedupeKey, messageId, tenant, tx };
}
