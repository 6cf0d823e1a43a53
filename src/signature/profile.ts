import { type Bytes, type SignedPiece, toBytes } from '../base/bytes.js';
import { RawBodyError } from '../base/errors.js';
import type { SignatureFailureReason } from '../contract/reasons.js';
import { getHeader, type HeaderSource } from '../contract/request.js';
import { type CryptoProvider, type DigestEncoding, digestLength, type HashName } from '../crypto/provider.js';
import { type BodyShapeProblem, type MemberSpan, topLevelMembers } from './json-members.js';
import type { ResolvedConfig, Slot } from './profile-config.js';
import type { TimestampOffset } from './profile-text.js';
import {
  bodyTimestamp,
  failed,
  isDigits,
  readBodySignature,
  type SignatureReading,
  syntaxes,
  withReadingFields,
} from './reading.js';
import type { Mode, SecretFormat } from './secrets.js';

// A signature profile, and what a delivery runs of it: the profile's reader and signed content, and verifying,
// the verifier's check of a request. A profile is made in profile-build.ts, once.

/** What a signer sends: the headers (content-type aside) and the body, which a body signature changes. */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: SignedPiece;
}

/** A signature format, made by createProfile (or a preset): the verifier, signers and diagnostics all use it. */
export interface SignatureProfile {
  readonly name: string;
  readonly hash: HashName;
  readonly encoding: DigestEncoding;
  readonly secretFormat: SecretFormat;
  /** The header the signature travels in; undefined when it travels in the body. */
  readonly signatureHeader: string | undefined;
  /** Every header the profile reads (lowercase). */
  readonly headers: readonly string[];
  /** The config it was made from, defaults filled in. */
  readonly config: Readonly<ResolvedConfig>;
  /** The format in one line, for example `webhook-signature: t=<unix seconds>,v1=<hex>`. */
  readonly format: string;
  /**
   * What a failure means under this profile and what to do: its header or body member, its syntax, the option
   * that names it. Given the request, a missing or malformed signature is pinpointed (a timestamp header, a
   * repeated member…). Given `offset`, a timestamp out of tolerance says by how much and what the tolerance is.
   * Never a secret, a signature or the body.
   */
  explain(
    reason: SignatureFailureReason,
    request?: { headers: HeaderSource; body: SignedPiece },
    offset?: TimestampOffset,
  ): string;
  /** Reads the request's signature parts. Never throws. */
  read(headers: HeaderSource, body: SignedPiece): SignatureReading;
  /** The signed content, as pieces fed to the HMAC in order (the body is never copied). */
  signedContent(reading: {
    timestampText: string | undefined;
    id: string | undefined;
    body: SignedPiece;
  }): readonly SignedPiece[];
  /** The parts a signer needs: what to sign, and how to lay the signature out for sending. */
  prepareSigning(input: { body: SignedPiece; timestamp: number | undefined; id: string | undefined }): {
    reading: { timestampText: string; id: string | undefined; body: SignedPiece };
    timestamp: number;
    deliver(signature: string): SignedDelivery;
  };
}

export type { TimestampOffset } from './profile-text.js';
export type { SignatureProblem, SignatureReading } from './reading.js';

export type VerifyResult =
  | { ok: true; timestamp: number; mode: Mode; secretLabel: string; messageId?: string }
  | {
      ok: false;
      reason: SignatureFailureReason;
      timestamp?: number;
      /** With `stale_timestamp` and `future_timestamp`: the tolerance (seconds) on the side it is out of. */
      toleranceSeconds?: number;
    };

/** What a request carries: its headers and its raw body exactly as received. */
export interface SignedRequestParts {
  headers: HeaderSource;
  body: string | Uint8Array;
}

type Fill = (reading: { timestampText: string | undefined; id: string | undefined }) => string;
export type BodyField = { bodyField: string } | undefined;

export function needsBody(config: ResolvedConfig, bodyField: BodyField): boolean {
  const source = config.timestamp;
  return bodyField !== undefined || (typeof source === 'object' && 'bodyField' in source);
}

/** The profile's one parser: the syntax's scan of the header or member, then the timestamp and id. */
export function makeReader(config: ResolvedConfig, bodyField: BodyField): SignatureProfile['read'] {
  const { signature, timestamp: timestampSource, id: idSource } = config;
  const scan = syntaxes[signature.syntax].scan;
  const withBody = needsBody(config, bodyField);
  return (headers, body) => {
    let bytes: Bytes | undefined;
    let members: MemberSpan[] | BodyShapeProblem | undefined;
    if (withBody) {
      bytes = toBytes(body);
      members = topLevelMembers(bytes);
    }
    const reading = bodyField
      ? readBodySignature(bytes as Bytes, members, bodyField.bodyField, scan)
      : withReadingFields(scan(getHeader(headers, (signature as { header: string }).header)), body);
    if (!reading.present) return failed(reading, 'missing_signature');
    if (reading.failure) return reading;
    if (reading.signatures.length === 0) return failed(reading, 'malformed_signature', 'signature_syntax');
    if (timestampSource === 'signature') {
      if (reading.timestamps !== 1 || !isDigits(reading.timestampText))
        return failed(reading, 'malformed_signature', 'signature_syntax');
      reading.timestamp = Number(reading.timestampText);
    } else if ('header' in timestampSource) {
      const value = getHeader(headers, timestampSource.header)?.trim();
      if (!isDigits(value)) return failed(reading, 'malformed_signature', 'timestamp_invalid');
      reading.timestamps = 1;
      reading.timestampText = value;
      reading.timestamp = Number(value);
    } else {
      const seconds = bodyTimestamp(bytes as Bytes, members, timestampSource.bodyField);
      if (seconds === undefined) return failed(reading, 'malformed_signature', 'timestamp_invalid');
      reading.timestamps = 1;
      reading.timestampText = String(seconds);
      reading.timestamp = seconds;
    }
    if (idSource) {
      reading.id = getHeader(headers, idSource.header)?.trim();
      if (!reading.id) return failed(reading, 'malformed_signature', 'id_missing');
    }
    return reading;
  };
}

export function makeSignedContent(config: ResolvedConfig): SignatureProfile['signedContent'] {
  const before = compile(config.template.before);
  const after = compile(config.template.after);
  return (reading) => {
    const head = before(reading);
    const tail = after(reading);
    if (tail) return head ? [head, reading.body, tail] : [reading.body, tail];
    return head ? [head, reading.body] : [reading.body];
  };
}

function compile(parts: readonly (string | Slot)[]): Fill {
  if (parts.length === 0) return () => '';
  // The default shape, `{timestamp}.`, as one concatenation.
  const [first, second] = parts;
  if (
    parts.length === 2 &&
    typeof first === 'object' &&
    first.slot === 'timestamp' &&
    typeof second === 'string'
  ) {
    return (reading) => reading.timestampText + second;
  }
  return (reading) => {
    let out = '';
    for (const part of parts) {
      out += typeof part === 'string' ? part : part.slot === 'timestamp' ? reading.timestampText : reading.id;
    }
    return out;
  };
}

/** Characters of a digest of `bytes` bytes in an encoding (base64 padded). */
export function encodedLength(encoding: 'hex' | 'base64', bytes: number): number {
  return encoding === 'hex' ? bytes * 2 : Math.ceil(bytes / 3) * 4;
}

/** A key a verifier tries, prepared once by its crypto provider. */
export interface VerifyingKey {
  readonly mode: Mode;
  readonly label: string;
  readonly prepared: unknown;
}

/**
 * A verifier's check of one request, made once by createVerifier from its profile, crypto and keys. Signature
 * parts present, of their form and length; timestamp tolerance; then the HMAC of each key. Sync with a sync
 * provider.
 */
export function verifying(
  profile: SignatureProfile,
  crypto: CryptoProvider,
  keys: readonly VerifyingKey[],
  { past, future }: { past: number; future: number },
): (request: SignedRequestParts, nowSeconds?: number) => VerifyResult | Promise<VerifyResult> {
  const { hash, encoding } = profile;
  const size = encodedLength(encoding, digestLength[hash]);
  const equal = encoding === 'hex' ? hexEqual : constantTimeEqual;
  /** Every candidate is compared in full: which one matched is not given away by timing. */
  const matches = (signatures: readonly string[], expected: string) => {
    let matched = false;
    for (const signature of signatures) if (equal(signature, expected)) matched = true;
    return matched;
  };

  const found = (reading: SignatureReading, mode: Mode, secretLabel: string): VerifyResult =>
    reading.id === undefined
      ? { ok: true, timestamp: reading.timestamp, mode, secretLabel }
      : { ok: true, timestamp: reading.timestamp, mode, secretLabel, messageId: reading.id };

  return function verify(request: SignedRequestParts, now = nowSeconds()) {
    const { headers, body } = request;
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw new RawBodyError(body);
    // Signature parts and timestamp first: a flood of stale or garbled requests costs no HMAC.
    const reading = profile.read(headers, body);
    if (reading.failure) return { ok: false, reason: reading.failure } as VerifyResult;
    const timestamp = reading.timestamp;
    const age = now - timestamp;
    if (age > past) {
      return { ok: false, reason: 'stale_timestamp', timestamp, toleranceSeconds: past } as VerifyResult;
    }
    if (-age > future) {
      return { ok: false, reason: 'future_timestamp', timestamp, toleranceSeconds: future } as VerifyResult;
    }
    // No candidate of the digest's encoded size: nothing could match, so no HMAC. Only the length is looked at
    // here; the characters are checked in the same pass that compares them, so a signature is read once.
    let candidates = 0;
    for (const signature of reading.signatures) if (signature.length === size) candidates++;
    if (candidates === 0) return { ok: false, reason: 'signature_mismatch', timestamp } as VerifyResult;
    const pieces = profile.signedContent(reading);
    if (crypto.sync) {
      for (const key of keys) {
        const expected = crypto.hmac(key.prepared, hash, pieces, encoding);
        if (matches(reading.signatures, expected)) return found(reading, key.mode, key.label);
      }
      return { ok: false, reason: 'signature_mismatch', timestamp } as VerifyResult;
    }
    return (async (): Promise<VerifyResult> => {
      for (const key of keys) {
        const expected = await crypto.hmac(key.prepared, hash, pieces, encoding);
        if (matches(reading.signatures, expected)) return found(reading, key.mode, key.label);
      }
      return { ok: false, reason: 'signature_mismatch', timestamp };
    })();
  };
}

/**
 * Compares two strings of the same public length in time that depends on that length only: the differences
 * are OR-ed together with no early exit.
 */
function constantTimeEqual(candidate: string, expected: string): boolean {
  if (candidate.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= candidate.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/**
 * constantTimeEqual for hex, where either case of a letter matches the lowercase digest. It also rejects what
 * is not hex in the same pass: OR-ing 0x20 would otherwise let the control characters 0x10–0x19 pass as the
 * digits `0`–`9`, so for a digit the case bit must match as well (`((e >> 6) ^ 1) << 5` is 0x20 below `@`,
 * where the digits are, and 0 at the letters), without a branch on the digest's characters.
 */
function hexEqual(candidate: string, expected: string): boolean {
  if (candidate.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) {
    const c = candidate.charCodeAt(i);
    const e = expected.charCodeAt(i);
    diff |= ((c | 0x20) ^ e) | ((c ^ e) & (((e >> 6) ^ 1) << 5));
  }
  return diff === 0;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
