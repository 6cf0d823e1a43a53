import type { SignedPiece } from '../base/bytes.js';
import { RawBodyError, WebhookConfigError } from '../base/errors.js';
import type { SignatureFailureReason } from '../contract/reasons.js';
import type { HeaderSource } from '../contract/request.js';
import { defaultCryptoProvider } from '../crypto/default.js';
import { type CryptoProvider, digestLength, type SyncCryptoProvider } from '../crypto/provider.js';
import { resolveProfile } from './presets.js';
import type { SignatureProfile, SignatureReading } from './profile.js';
import { type Mode, resolveKeys, type Secrets } from './secrets.js';

/** Seconds a timestamp may be in the past and in the future; one number sets both. */
export type Tolerance = number | { past?: number; future?: number };
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type VerifyResult =
  | { ok: true; timestamp: number; mode: Mode; secretLabel: string; messageId?: string }
  | {
      ok: false;
      reason: SignatureFailureReason;
      timestamp?: number;
      /** With `stale_timestamp` and `future_timestamp`: the tolerance (seconds) on the side it is out of. */
      toleranceSeconds?: number;
    };

export interface VerifierOptions {
  /** An unset variable (undefined) throws a WebhookConfigError that says so. */
  secrets: Secrets | undefined;
  toleranceSeconds?: Tolerance | undefined;
  /** The signature format. Default: defaultProfile (`webhook-signature: t=…,v1=…`). */
  profile?: SignatureProfile | undefined;
  /** Renames the default profile's header; not together with `profile`. */
  signatureHeader?: string | undefined;
  /** Default: defaultCryptoProvider() (node:crypto where it exists, else Web Crypto). */
  crypto?: CryptoProvider | undefined;
}

/** What a request carries: its headers and its raw body exactly as received. */
export interface SignedRequestParts {
  headers: HeaderSource;
  body: string | Uint8Array;
}

export interface Verifier<
  R extends VerifyResult | Promise<VerifyResult> = VerifyResult | Promise<VerifyResult>,
> {
  readonly profile: SignatureProfile;
  readonly crypto: CryptoProvider;
  /** Labels of the secrets (`live[0]`, `test[1]`) in the order an HMAC is tried: names them in diagnostics. */
  readonly secretLabels: readonly string[];
  /** Checks in order: signature parts present, of their form and length; timestamp tolerance; then HMAC. Sync with a sync provider. */
  verify(request: SignedRequestParts, nowSeconds?: number): R;
  verifyAsync(request: SignedRequestParts, nowSeconds?: number): Promise<VerifyResult>;
  /**
   * What the sender signed as `{body}`: the raw body, or for a body signature the body without its member
   * (cut from the bytes). The same for every re-spelling of one signature, so it identifies an event without
   * an id.
   */
  signedBody(request: SignedRequestParts): SignedPiece;
}

/** The crypto option, checked here: a wrong object would otherwise fail only on the first delivery. */
export function cryptoOf(options: Pick<VerifierOptions, 'crypto'>): CryptoProvider {
  const crypto = options.crypto ?? defaultCryptoProvider();
  if (
    typeof crypto?.hmac !== 'function' ||
    typeof crypto.prepareKey !== 'function' ||
    typeof crypto.sha256Hex !== 'function'
  ) {
    throw new WebhookConfigError(
      'crypto must be a CryptoProvider: nodeCryptoProvider(), webCryptoProvider(), or an object with sync, prepareKey, hmac and sha256Hex.',
    );
  }
  return crypto;
}

/** Resolves secrets, profile and keys once; use it on hot paths instead of verifySignature. */
export function createVerifier(
  options: VerifierOptions & { crypto: SyncCryptoProvider },
): Verifier<VerifyResult>;
export function createVerifier(options: VerifierOptions): Verifier;
export function createVerifier(options: VerifierOptions): Verifier {
  const profile = resolveProfile(options);
  const crypto = cryptoOf(options);
  const { hash, encoding } = profile;
  const keys = resolveKeys(options.secrets, profile.secretFormat).map((key) => ({
    mode: key.mode,
    label: key.label,
    prepared: crypto.prepareKey(key.bytes, hash),
  }));
  const { past, future } = resolveTolerance(options.toleranceSeconds);
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

  function verify(request: SignedRequestParts, now = nowSeconds()) {
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
  }

  return {
    profile,
    crypto,
    secretLabels: keys.map((key) => key.label),
    verify,
    async verifyAsync(request, now) {
      return verify(request, now);
    },
    signedBody: (request) => profile.read(request.headers, request.body).body,
  };
}

/**
 * Whether a signature value can be a digest of this size and encoding: hex digits in either case, or base64 of
 * the digest's encoded length. For diagnostics; the verifier looks at the length before its HMAC and at the
 * characters in the comparison.
 */
export function candidateCheck(encoding: 'hex' | 'base64', bytes: number): (value: string) => boolean {
  const length = encodedLength(encoding, bytes);
  if (encoding === 'base64') return (value) => value.length === length;
  return (value) => {
    if (value.length !== length) return false;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 48 && code <= 57) continue;
      // Letters only are lowercased: OR-ing 0x20 into any code would let control characters pass as digits.
      const lower = code | 0x20;
      if (!(lower >= 97 && lower <= 102)) return false;
    }
    return true;
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

/** Characters of a digest of `bytes` bytes in an encoding (base64 padded). */
export function encodedLength(encoding: 'hex' | 'base64', bytes: number): number {
  return encoding === 'hex' ? bytes * 2 : Math.ceil(bytes / 3) * 4;
}

export function resolveTolerance(tolerance: Tolerance | undefined): { past: number; future: number } {
  const given =
    typeof tolerance === 'number' || tolerance === undefined
      ? { past: tolerance, future: tolerance }
      : tolerance;
  const past = given.past ?? DEFAULT_TOLERANCE_SECONDS;
  const future = given.future ?? DEFAULT_TOLERANCE_SECONDS;
  for (const value of [past, future]) {
    if (!Number.isFinite(value) || value < 0) {
      throw new WebhookConfigError(
        'toleranceSeconds must be a non-negative number of seconds (default 300).',
      );
    }
  }
  return { past, future };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
