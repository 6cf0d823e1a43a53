import { byteLength, type SignedPiece, sha256Hex } from '../crypto-backend.js';
import { getHeader, type HeaderSource } from '../request.js';

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
    signature: SignatureHeaderShape;
  };
  /** Labels (`live[0]`, `test[1]`) of the secrets an HMAC was computed with; empty when none was reached. */
  secretsTried: readonly string[];
}

export interface SignatureHeaderShape {
  present: boolean;
  /** Number of `t=` items (exactly one is valid). */
  t: number;
  /** Number of `v1=` items, and how many of them are hex of the digest's length (the others cannot match). */
  v1: number;
  v1WellFormed: number;
  /** Now minus the header's t, in seconds: positive when the signature is older than this server's clock. */
  clockSkewSeconds?: number;
}

export interface DiagnosticsContext {
  signatureHeader: string;
  /** Bytes of the scheme's digest: a v1 of any other length is not a candidate. */
  digestLength: number;
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
const HEX = /^[0-9a-fA-F]+$/;
const DIGITS = /^[0-9]+$/;
const SHA256_PREFIX_LENGTH = 12;

/** Computed on the rejection path only: a delivery that verifies pays none of this. */
export async function rejectionDiagnostics(
  context: DiagnosticsContext,
  headers: HeaderSource,
  body: SignedPiece | undefined,
  reason: string | undefined,
  nowSeconds: number,
): Promise<RejectionDiagnostics> {
  const present = [...RELEVANT_HEADERS, context.signatureHeader].filter(
    (name) => readHeader(headers, name) !== undefined,
  );
  const signature = signatureShape(
    readHeader(headers, context.signatureHeader),
    context.digestLength,
    nowSeconds,
  );
  const diagnostics: RejectionDiagnostics = {
    headers: { present, signature },
    // The verifier computes HMACs only after the header and timestamp passed, and only for a candidate v1.
    secretsTried: reason === 'signature_mismatch' && signature.v1WellFormed > 0 ? context.secretLabels : [],
  };
  if (body !== undefined) {
    diagnostics.body = {
      bytes: byteLength(body),
      sha256Prefix: (await sha256Hex(body)).slice(0, SHA256_PREFIX_LENGTH),
    };
  }
  return diagnostics;
}

/** Counts the items of a `t=…,v1=…` header without keeping any value but the timestamp. */
function signatureShape(
  header: string | undefined,
  digestLength: number,
  nowSeconds: number,
): SignatureHeaderShape {
  const shape: SignatureHeaderShape = {
    present: header !== undefined && header.trim() !== '',
    t: 0,
    v1: 0,
    v1WellFormed: 0,
  };
  if (!shape.present) return shape;
  let timestamp: string | undefined;
  // Split as the verifier does (signature-header.ts), so the counts describe what it saw.
  for (const raw of (header as string).split(',')) {
    const item = raw.trim();
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === 't') {
      shape.t++;
      timestamp = value;
    } else if (key === 'v1') {
      shape.v1++;
      if (value.length === digestLength * 2 && HEX.test(value)) shape.v1WellFormed++;
    }
  }
  if (shape.t === 1 && timestamp !== undefined && DIGITS.test(timestamp)) {
    shape.clockSkewSeconds = nowSeconds - Number(timestamp);
  }
  return shape;
}

/** A header that cannot be read (a throwing Headers object) counts as absent: diagnostics never fail a request. */
function readHeader(headers: HeaderSource, name: string): string | undefined {
  try {
    return getHeader(headers, name);
  } catch {
    return undefined;
  }
}
