import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';
import { $ZodObject, $ZodObjectJIT, config, safeParse } from 'zod/v4/core';
import { en } from 'zod/v4/locales';
import type { SignedPiece } from '../base/bytes.js';
import type { DeliveryContext, ErrorContext, HandlerContext } from '../contract/context.js';
import type { CryptoProvider } from '../crypto/provider.js';
import type { Catalogue, ParsedEvent } from '../events/catalogue.js';
import type { Mode } from '../signature/secrets.js';
import type { Verifier } from '../signature/verifier.js';
import type { Verified } from './1-read-verify.js';
import type { Rejection } from './ending.js';

/** A verified request whose body is an event of the catalogue (or of a type it does not know). */
export interface Parsed extends Verified {
  readonly event: { type: string; id?: string };
}

const INVALID_JSON: Rejection = { stop: 'invalid_json' };
const withoutByteOrderMark = new TextDecoder();

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
  return withoutByteOrderMark.decode(body);
}

/**
 * The envelope every event shares, made on the first parse: a receiver's creation and the package's import
 * build no schema, so a cold start (a serverless function's first answer) does not wait on zod.
 */
const envelopeShape = once(() => ({
  id: z.optional(z.string().check(z.startsWith('evt_'))),
  created_at: z.optional(z.iso.datetime({ offset: true })),
  // Its syntax is the signature profile's to check (a body-signature profile reads it before this schema runs).
  signature: z.optional(z.string()),
}));

/**
 * An object schema that keeps the fields it does not declare, built on zod's core as both flavours' objects are.
 * `compiled`: zod compiles it into one function where the runtime allows it (Node, Bun, Deno; not Workers), as
 * classic zod's objects; else a plain object (zod/mini's), quicker to build and to parse once.
 */
function loose(def: core.$ZodObjectDef, compiled: boolean): core.$ZodType {
  const full = { ...def, catchall: def.catchall ?? z.unknown() };
  return compiled ? new $ZodObjectJIT(full) : new $ZodObject(full);
}

/** The envelope, `type` and `data` (made tolerant) in one schema that keeps fields it does not declare. */
function eventSchema(type: core.$ZodType, data: core.$ZodType, compiled: boolean): core.$ZodType {
  const shape = { ...envelopeShape(), type, data: tolerant(data, compiled) };
  return loose({ type: 'object', shape }, compiled);
}

const unknownEvent = (compiled: boolean) =>
  eventSchema(z.string().check(z.minLength(1)), z.unknown(), compiled);

function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

/**
 * zod compiles an object schema on its first parse (`new Function`), a cost only many parses repay: a type's
 * events are parsed by a plain object schema until it has parsed this many, then by a compiled one made in its
 * place, so a process that answers a few deliveries (a cold start, a quiet endpoint) never builds or compiles it.
 */
const COMPILE_AFTER = 64;
/** For the object schemas of classic zod a catalogue may hold inside its data schemas, which compile too. */
const FIELD_BY_FIELD = { jitless: true } as const;

interface Parsing {
  schema: core.$ZodType;
  readonly known: boolean;
  parses: number;
  readonly make: (compiled: boolean) => core.$ZodType;
}

function parsingBy(make: (compiled: boolean) => core.$ZodType, known: boolean): Parsing {
  return { schema: make(false), known, parses: 0, make };
}

/**
 * An event's data schema as the parser runs it: an object schema of either zod flavour keeps the fields it
 * does not declare (its own catchall, if it has one, stays); any other schema is used as it is.
 */
function tolerant(data: core.$ZodType, compiled: boolean): core.$ZodType {
  const def = data._zod.def as core.$ZodObjectDef;
  return def.type === 'object' ? loose(def, compiled) : data;
}

/**
 * zod/mini loads no locale, and an issue's message goes into the 422 answer: English is made the default, as
 * classic zod does when its first schema is built, unless the app chose a locale (`z.config(...)`) already.
 * Its messages are made at the first issue (most processes never see one). A parse context with its own
 * error map instead would slow every parse.
 */
function englishByDefault(): void {
  if (config().localeError !== undefined) return;
  const english = once(() => en().localeError);
  config({ localeError: (issue) => english()(issue) });
}

/** Builds one schema per event type, on its first event; parsing picks it by the `type` field. */
export function createEventParser(catalogue: Catalogue): (value: unknown) => ParsedEvent {
  englishByDefault();
  const parsings = new Map<string, Parsing>();
  let unknown: Parsing | undefined;
  const parsingOf = (type: unknown): Parsing => {
    if (typeof type !== 'string' || !Object.hasOwn(catalogue, type)) {
      unknown ??= parsingBy(unknownEvent, false);
      return unknown;
    }
    let parsing = parsings.get(type);
    if (parsing === undefined) {
      const data = catalogue[type] as core.$ZodType;
      parsing = parsingBy((compiled) => eventSchema(z.literal(type), data, compiled), true);
      parsings.set(type, parsing);
    }
    return parsing;
  };
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, issues: [{ path: '', code: 'invalid_type', message: 'Expected a JSON object' }] };
    }
    const parsing = parsingOf((value as { type?: unknown }).type);
    if (parsing.parses === COMPILE_AFTER) parsing.schema = parsing.make(true);
    const context = parsing.parses < COMPILE_AFTER ? FIELD_BY_FIELD : undefined;
    parsing.parses++;
    const result = safeParse(parsing.schema, value, context);
    if (result.success) {
      return {
        ok: true,
        event: result.data as { type: string; id?: string; data: unknown },
        known: parsing.known,
      };
    }
    return {
      ok: false,
      issues: result.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        code: issue.code,
        message: issue.message,
      })),
    };
  };
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
  // Flat (a join, not a `+` rope): the memory store keeps the key for the whole retention period.
  if (typeof event.id === 'string') return keyed(parsed, [mode, event.id].join(':'));
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
