import type { SignatureFailureReason } from '../contract/reasons.js';
import type { HeaderSource } from '../contract/request.js';
import type { VerifyResult } from '../signature/index.js';
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
  /** The message of a failure, in the terms of the profile. */
  explain(reason: SignatureFailureReason, request: SignedRequestParts): string;
}

/** Checks the signature over the raw body. */
export function verify(
  read: Read,
  signature: Signature,
  nowSeconds: number,
): Verified | Stop | Promise<Verified | Stop> {
  const signed = { headers: read.request.headers, body: read.body };
  const result = signature.check(signed, nowSeconds);
  if (result instanceof Promise) return result.then((settled) => accept(read, settled, signature));
  return accept(read, result, signature);
}

function accept(read: Read, result: VerifyResult, signature: Signature): Verified | Stop {
  if (!result.ok) {
    const message = signature.explain(result.reason, { headers: read.request.headers, body: read.body });
    return { stop: result.reason, message };
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
