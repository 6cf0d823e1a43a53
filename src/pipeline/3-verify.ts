import type { SignatureFailureReason } from '../contract/reasons.js';
import type { HeaderSource } from '../contract/request.js';
import type { TimestampOffset, VerifyResult } from '../signature/index.js';
import type { Mode } from '../signature/secrets.js';
import type { SignedRequestParts } from '../signature/verifier.js';
import type { Read } from './2-read-body.js';
import type { Stop } from './stop.js';

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

/** Checks the signature over the raw body. */
export function verify(
  read: Read,
  signature: Signature,
  nowSeconds: number,
): Verified | Stop | Promise<Verified | Stop> {
  const signed = { headers: read.request.headers, body: read.body };
  const result = signature.check(signed, nowSeconds);
  if (result instanceof Promise)
    return result.then((settled) => accept(read, settled, signature, nowSeconds));
  return accept(read, result, signature, nowSeconds);
}

function accept(read: Read, result: VerifyResult, signature: Signature, nowSeconds: number): Verified | Stop {
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
