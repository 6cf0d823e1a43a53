import { byteLength, type SignedPiece } from '../base/bytes.js';
import type { Mode } from '../contract/context.js';
import type { RejectionReason } from '../contract/reasons.js';
import { getHeader, type HeaderSource } from '../contract/request.js';
import { type CryptoProvider, digestLength } from '../crypto/provider.js';
import { encodedLength, type SignatureProfile } from '../signature/profile.js';
import { isDigits } from '../signature/reading.js';
import { candidateCheck } from '../signature/verifier.js';

/**
 * Redacted facts about a rejected request, for the operator's log: enough to tell a wrong secret, a skewed
 * clock or a re-serialized body apart, and nothing that helps forge a signature. Never the secret, the
 * expected or received signature, or the body.
 */
export interface RejectionDiagnostics {
  /** Present once the body was read. */
  body?: { bytes: number; sha256Prefix: string };
  headers: {
    /** Which of the headers that matter here were sent (names only). */
    present: string[];
  };
  /** The signature as the receiver's own profile reads it, wherever that profile carries it. */
  signature: SignatureShape;
  /** Labels (`live[0]`, `test[1]`) of the secrets an HMAC was computed with; empty when none was reached. */
  secretsTried: readonly string[];
}

/** What the profile's parser read, counted (the same parser the verifier uses). */
export interface SignatureShape {
  /** The profile's format in one line (`webhook-signature: t=<unix seconds>,v1=<hex>`, …): what was expected. */
  format: string;
  present: boolean;
  /** Number of timestamps found (`t=` items, or the timestamp header or body field; exactly one is valid). */
  timestamps: number;
  /** Number of signatures, and how many can be a digest (its encoded length; hex digits for hex). */
  signatures: number;
  wellFormed: number;
  /** Now minus the signed timestamp, in seconds: positive when the signature is older than this server's clock. */
  clockSkewSeconds?: number;
}

export interface DiagnosticsContext {
  profile: SignatureProfile;
  crypto: CryptoProvider;
  /** Secret labels in the order the verifier tries them. */
  secretLabels: readonly string[];
}

const RELEVANT_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'user-agent',
];
const SHA256_PREFIX_LENGTH = 12;

/** Computed on the rejection path only: a delivery that verifies pays none of this. */
export async function rejectionDiagnostics(
  context: DiagnosticsContext,
  headers: HeaderSource,
  body: SignedPiece | undefined,
  reason: string | undefined,
  nowSeconds: number,
): Promise<RejectionDiagnostics> {
  const present = [...RELEVANT_HEADERS, ...context.profile.headers].filter(
    (name) => readHeader(headers, name) !== undefined,
  );
  const { signature, sized } = signatureShape(context.profile, headers, body, nowSeconds);
  // Built in reading order (body, headers, secrets): a text log line flattens it as it is.
  const diagnostics = {} as RejectionDiagnostics;
  if (body !== undefined) {
    diagnostics.body = {
      bytes: byteLength(body),
      sha256Prefix: (await context.crypto.sha256Hex(body)).slice(0, SHA256_PREFIX_LENGTH),
    };
  }
  diagnostics.headers = { present };
  diagnostics.signature = signature;
  // The verifier computes HMACs only after the header and timestamp passed, and only when a signature has the
  // digest's encoded length (whether it is hex is checked in the comparison).
  diagnostics.secretsTried = reason === 'signature_mismatch' && sized > 0 ? context.secretLabels : [];
  return diagnostics;
}

/**
 * Counts what the profile's parser read, keeping no value but the timestamp; `sized`: the signatures of the
 * digest's encoded length, for which the verifier computes an HMAC.
 */
function signatureShape(
  profile: SignatureProfile,
  headers: HeaderSource,
  body: SignedPiece | undefined,
  nowSeconds: number,
): { signature: SignatureShape; sized: number } {
  const shape: SignatureShape = {
    format: profile.format,
    present: false,
    timestamps: 0,
    signatures: 0,
    wellFormed: 0,
  };
  // A signature in the body cannot be looked at before the body was read.
  if (body === undefined && profile.signatureHeader === undefined) return { signature: shape, sized: 0 };
  const reading = profile.read({ get: (name) => readHeader(headers, name) ?? null }, body ?? '');
  shape.present = reading.present;
  if (!shape.present) return { signature: shape, sized: 0 };
  const bytes = digestLength[profile.hash];
  const candidate = candidateCheck(profile.encoding, bytes);
  const size = encodedLength(profile.encoding, bytes);
  shape.timestamps = reading.timestamps;
  shape.signatures = reading.signatures.length;
  shape.wellFormed = reading.signatures.filter(candidate).length;
  if (shape.timestamps === 1 && isDigits(reading.timestampText)) {
    shape.clockSkewSeconds = nowSeconds - Number(reading.timestampText);
  }
  return { signature: shape, sized: reading.signatures.filter((value) => value.length === size).length };
}

/** A header that cannot be read (a throwing Headers object) counts as absent: diagnostics never fail a request. */
function readHeader(headers: HeaderSource, name: string): string | undefined {
  try {
    return getHeader(headers, name);
  } catch {
    return undefined;
  }
}

/** A request answered 4xx: turned away before its event was processed, so no error on this side. */
export interface WebhookRejection {
  requestId: string;
  reason: RejectionReason;
  /** 400, 401, 405, 408, 409, 413, 415 or 422. */
  status: number;
  /** The message the sender was answered with: what to fix. */
  message: string;
  /** Set once the event was parsed (invalid_event does not parse it into one). */
  eventId?: string;
  eventType?: string;
  /** Set when the signature verified and the secrets option separates live and test. */
  mode?: Mode;
  /** With the receiver's `tenant` option: the tenant the request named. */
  tenant?: string;
  /** Redacted facts to tell a wrong secret, a skewed clock or a re-serialized body apart. */
  diagnostics?: RejectionDiagnostics;
}
