import type { SignatureFailureReason } from '../contract/reasons.js';
import type { HeaderSource } from '../contract/request.js';
import type { TimestampOffset, VerifyResult } from '../signature/index.js';
import type { Mode } from '../signature/secrets.js';
import type { SignedRequestParts, Verifier } from '../signature/verifier.js';
import type { Read } from './1-read.js';
import type { Rejection } from './ending.js';

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
export async function verify(
  read: Read,
  signature: Signature,
  nowSeconds: number,
): Promise<Verified | Rejection> {
  const result = await signature.check({ headers: read.request.headers, body: read.body }, nowSeconds);
  return accept(read, result, signature, nowSeconds);
}

function accept(
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
