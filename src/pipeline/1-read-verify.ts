import { byteLength, type SignedPiece } from '../base/bytes.js';
import { RawBodyError } from '../base/errors.js';
import type { SignatureFailureReason } from '../contract/reasons.js';
import {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  getHeader,
  type HeaderSource,
  isJsonContentType,
  type ReceiveRequest,
} from '../contract/request.js';
import type { TimestampOffset, VerifyResult } from '../signature/index.js';
import type { SignedRequestParts } from '../signature/profile.js';
import type { Mode } from '../signature/secrets.js';
import type { Verifier } from '../signature/verifier.js';
import type { Rejection } from './ending.js';

// Stages 1 and 2 of the walk: the request checked and its body read, then its signature verified. With the
// `tenant` option the tenant's secrets are found between the two (2-tenant.ts).

/** A request as it arrives, under the id its answer and every log line carry. */
export interface Received {
  readonly request: ReceiveRequest;
  readonly requestId: string;
}

// Every request id of the package (the receiver's, the CLI's listen, the emulator's) comes from here, in one
// format: `req_` and 32 hex digits. Request ids only need to be unique, not secret: a random per-process prefix
// and a counter cost a string join instead of a UUID per request. The prefix comes from Math.random, which every
// runtime seeds per process from the system's entropy: unique enough, and no crypto module is loaded or run for
// it in a cold start's first answer. Drawn at the first request: Cloudflare Workers refuse random values at a
// module's global scope.
let requestIdPrefix: string | undefined;
let requestCounter = 0;

/** 16 hex digits, two draws of 32 bits. */
function randomPrefix(): string {
  const draw = () =>
    Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  return `req_${draw()}${draw()}`;
}

/** A new request id: `receiving` gives one to every request that comes without its own. */
export function nextRequestId(): string {
  requestIdPrefix ??= randomPrefix();
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  // Joined, not concatenated: `+` and template literals make a rope (a string of pointers to its parts) that
  // every later reader must flatten first, and node's check of a header value does so through a slow call
  // into the engine.
  return [requestIdPrefix, requestCounter.toString(16).padStart(16, '0')].join('');
}

/** A request whose body was read: the raw body, exactly as received. */
export interface Read extends Received {
  readonly body: SignedPiece;
}

const NOT_POST: Rejection = { stop: 'method_not_allowed' };
const NOT_JSON: Rejection = { stop: 'unsupported_media_type' };
const ENCODED: Rejection = { stop: 'unsupported_encoding' };

/**
 * The cheap checks, before a byte of the body is read: a webhook is a POST of uncompressed JSON. A compressed
 * body is refused in every adapter alike, whether or not a framework's parser inflated it already.
 */
export function checkRequest(received: Received): Rejection | undefined {
  const { request } = received;
  const method = request?.method;
  if (method !== 'POST' && (typeof method !== 'string' || method.toUpperCase() !== 'POST')) return NOT_POST;
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) return NOT_JSON;
  const encoding = getHeader(request.headers, 'content-encoding');
  if (encoding !== undefined && !isIdentity(encoding)) return ENCODED;
  return undefined;
}

/** `identity`, or no coding at all (an empty value, or a list of only `identity`). */
function isIdentity(encoding: string): boolean {
  for (const coding of encoding.split(',')) {
    const name = coding.trim().toLowerCase();
    if (name !== '' && name !== 'identity') return false;
  }
  return true;
}

/**
 * Reads the body within `maxBytes` and `deadlineMs`, streaming when the adapter gave a reader. Anything that is
 * not bytes or a string (a framework parsed it first) is body_already_parsed, and the message names what came.
 */
export function readBody(
  received: Received,
  maxBytes: number,
  deadlineMs: number,
): Read | Rejection | Promise<Read | Rejection> {
  // A body the adapter already holds is checked as it is: only a stream is waited for.
  if (!received.request.readBody) return acceptBody(received, received.request.rawBody, maxBytes);
  return readStream(received, maxBytes, deadlineMs);
}

async function readStream(
  received: Received,
  maxBytes: number,
  deadlineMs: number,
): Promise<Read | Rejection> {
  const { request } = received;
  let body: unknown;
  try {
    body = await request.readBody?.(maxBytes, deadlineMs);
  } catch {
    return REQUEST_ABORTED;
  }
  return acceptBody(received, body, maxBytes);
}

const REQUEST_ABORTED: Rejection = { stop: 'request_aborted' };

function acceptBody(received: Received, body: unknown, maxBytes: number): Read | Rejection {
  if (body === BODY_TOO_LARGE) return { stop: 'payload_too_large' };
  if (body === BODY_TIMEOUT) return { stop: 'body_timeout' };
  if (body === BODY_LENGTH_MISMATCH) return { stop: 'content_length_mismatch' };
  // The body's type is told apart once: bytes are counted as they are, text by its UTF-8 bytes.
  if (body instanceof Uint8Array) {
    if (body.byteLength > maxBytes) return { stop: 'payload_too_large' };
  } else if (typeof body !== 'string') {
    const { message } = new RawBodyError(body, received.request.rawBodyHint);
    return { stop: 'body_already_parsed', message };
  } else if (byteLength(body) > maxBytes) return { stop: 'payload_too_large' };
  // Each step is a literal of one fixed shape, never a spread of the step before: V8 keeps one hidden class.
  return { request: received.request, requestId: received.requestId, body };
}

/** A request whose signature verified: the mode whose secret matched and what the signature carried. */
export interface Verified extends Read {
  readonly mode: Mode;
  /** The signature's timestamp (unix seconds). */
  readonly timestamp: number;
  /** For a profile that signs one: the delivery's message id. */
  readonly messageId: string | undefined;
  /** With the `tenant` option: the tenant whose secret verified it. */
  readonly tenant: string | undefined;
}

/** The receiver's signature profile, as the verify stage uses it. */
export interface Signature {
  /** Synchronous where the crypto is (node:crypto). */
  check(
    input: { headers: HeaderSource; body: string | Uint8Array },
    nowSeconds: number,
  ): VerifyResult | Promise<VerifyResult>;
  /** The message of a failure, in the terms of the profile; with `offset`, how far out its timestamp is. */
  explain(reason: SignatureFailureReason, request: SignedRequestParts, offset?: TimestampOffset): string;
  /** Labels of its secrets in the order they are tried (`live[0]`), for the diagnostics of a rejection. */
  readonly secretLabels?: readonly string[];
}

/** A verifier as the verify stage uses it. */
export function signatureOf(verifier: Verifier): Signature {
  return {
    check: (input, now) => verifier.verify(input, now),
    explain: (reason, request, offset) => verifier.profile.explain(reason, request, offset),
    secretLabels: verifier.secretLabels,
  };
}

/** Checks the signature over the raw body (the crypto provider's own wait, when it has one, is awaited). */
/** What the verify stage checks: the request's headers and body, as the signature reads them. */
export function signedInput(read: Read): { headers: HeaderSource; body: string | Uint8Array } {
  return { headers: read.request.headers, body: read.body };
}

/**
 * The verify stage's answer, once the signature checked the request (`signature.check(signedInput(read))`,
 * awaited by the walk: synchronous where the crypto is).
 */
export function acceptSignature(
  read: Read,
  result: VerifyResult,
  signature: Signature,
  nowSeconds: number,
): Verified | Rejection {
  if (!result.ok) {
    const signed = { headers: read.request.headers, body: read.body };
    return {
      stop: result.reason,
      message: signature.explain(result.reason, signed, offsetOf(result, nowSeconds)),
    };
  }
  return {
    request: read.request,
    requestId: read.requestId,
    body: read.body,
    mode: result.mode,
    timestamp: result.timestamp,
    messageId: result.messageId,
    tenant: (read as { tenant?: string }).tenant,
  };
}

/** How far out of tolerance a stale or future timestamp is; undefined for any other failure. */
function offsetOf(result: VerifyResult & { ok: false }, nowSeconds: number): TimestampOffset | undefined {
  const { timestamp, toleranceSeconds } = result;
  if (timestamp === undefined || toleranceSeconds === undefined) return undefined;
  return { timestamp, offsetSeconds: Math.abs(nowSeconds - timestamp), toleranceSeconds };
}
