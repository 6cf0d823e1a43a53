import type { SignedPiece } from '../base/bytes.js';
import { WebhookConfigError } from '../base/errors.js';
import { defaultCryptoProvider } from '../crypto/default.js';
import type { CryptoProvider, SyncCryptoProvider } from '../crypto/provider.js';
import { resolveProfile } from './presets.js';
import {
  encodedLength,
  type SignatureProfile,
  type SignedRequestParts,
  type VerifyResult,
  verifying,
} from './profile.js';
import { resolveKeys, type Secrets } from './secrets.js';

/** Seconds a timestamp may be in the past and in the future; one number sets both. */
export type Tolerance = number | { past?: number; future?: number };
export const DEFAULT_TOLERANCE_SECONDS = 300;

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
  const { hash } = profile;
  const keys = resolveKeys(options.secrets, profile.secretFormat).map((key) => ({
    mode: key.mode,
    label: key.label,
    prepared: crypto.prepareKey(key.bytes, hash),
  }));
  const verify = verifying(profile, crypto, keys, resolveTolerance(options.toleranceSeconds));

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
