import {
  allocBytes,
  type Digest,
  decodeHexInto,
  digestLength,
  type HashName,
  hasSyncCrypto,
  hmacAsync,
  hmacSync,
  prepareHmacKey,
  type SignedPiece,
  timingSafeEqualAt,
  toHex,
} from './crypto-backend.js';
import { RawBodyError, type SignatureFailureReason, WebhookConfigError } from './errors.js';
import { type Key, type Mode, resolveKeys, type Secret, type Secrets } from './secrets.js';
import { parseSignatureHeader } from './signature-header.js';

/**
 * How the service signs. The preview API leaves algorithm and signed text open, so both are an option;
 * the default is HMAC-SHA256 over `"<t>." + raw body` with v1 as hex (Stripe's scheme, same header form).
 */
export interface SignatureScheme {
  readonly hash: HashName;
  /** The signed content as pieces, fed to the HMAC in order (no concatenation copy of the body). */
  signedContent(timestamp: string, body: SignedPiece): readonly SignedPiece[];
}

export const defaultScheme: SignatureScheme = {
  hash: 'SHA-256',
  signedContent: (timestamp, body) => [`${timestamp}.`, body],
};

/** Seconds a timestamp may be in the past and in the future; one number sets both. */
export type Tolerance = number | { past?: number; future?: number };
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type VerifyResult =
  | { ok: true; timestamp: number; mode: Mode; secretLabel: string }
  | { ok: false; reason: SignatureFailureReason; timestamp?: number };

export interface VerifierOptions {
  /** An unset variable (undefined) throws a WebhookConfigError that says so. */
  secrets: Secrets | undefined;
  toleranceSeconds?: Tolerance;
  scheme?: SignatureScheme;
}

export interface VerifyOptions extends VerifierOptions {
  /** The raw body exactly as received: bytes, or the string the bytes decode to. */
  payload: string | Uint8Array;
  header: string | null | undefined;
  /** Current time in unix seconds; defaults to the clock. */
  now?: number;
}

export interface Verifier {
  /** Labels of the secrets (`live[0]`, `test[1]`) in the order an HMAC is tried: names them in diagnostics. */
  readonly secretLabels: readonly string[];
  /** Sync where node:crypto exists. */
  verify(payload: string | Uint8Array, header: string | null | undefined, now?: number): VerifyResult;
  /** Works everywhere (Web Crypto fallback for edge runtimes). */
  verifyAsync(
    payload: string | Uint8Array,
    header: string | null | undefined,
    now?: number,
  ): Promise<VerifyResult>;
}

/** Resolves secrets and options once; use it on hot paths instead of verifySignature. */
export function createVerifier(options: VerifierOptions): Verifier {
  const keys = resolveKeys(options.secrets).map((key) => ({ ...key, hmacKey: prepareHmacKey(key.bytes) }));
  const scheme = options.scheme ?? defaultScheme;
  const { past, future } = resolveTolerance(options.toleranceSeconds);
  const length = digestLength[scheme.hash];

  type Prepared = {
    ok: true;
    timestamp: number;
    pieces: readonly SignedPiece[];
    /** The v1 values that decoded, one after the other, `count` of them. */
    candidates: Uint8Array;
    count: number;
  };
  // Decoded v1 values of the synchronous path, reused call after call; the async path awaits between
  // decoding and comparing, so it decodes into its own bytes.
  let scratch = allocBytes(4 * length);
  // Header and timestamp first: a flood of stale or garbled requests costs no HMAC.
  const prepare = (
    payload: unknown,
    header: string | null | undefined,
    now: number,
    reuseScratch: boolean,
  ): Prepared | Extract<VerifyResult, { ok: false }> => {
    if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) throw new RawBodyError(payload);
    const parsed = parseSignatureHeader(header);
    if (!parsed.ok) return parsed;
    const { timestamp, signatures } = parsed;
    const age = now - timestamp;
    if (age > past) return { ok: false, reason: 'stale_timestamp', timestamp };
    if (-age > future) return { ok: false, reason: 'future_timestamp', timestamp };
    const needed = signatures.length * length;
    let candidates = reuseScratch ? scratch : allocBytes(needed);
    if (candidates.length < needed) {
      candidates = allocBytes(needed);
      if (reuseScratch) scratch = candidates;
    }
    let count = 0;
    for (const hex of signatures) if (decodeHexInto(hex, candidates, count * length, length)) count++;
    // No v1 of the digest's size in hex: nothing could match, so no HMAC.
    if (count === 0) return { ok: false, reason: 'signature_mismatch', timestamp };
    return {
      ok: true,
      timestamp,
      pieces: scheme.signedContent(parsed.timestampText, payload),
      candidates,
      count,
    };
  };

  const match = (prepared: Prepared, key: Key, expected: Digest): VerifyResult | undefined => {
    for (let i = 0; i < prepared.count; i++) {
      if (timingSafeEqualAt(prepared.candidates, i * length, expected)) {
        return { ok: true, timestamp: prepared.timestamp, mode: key.mode, secretLabel: key.label };
      }
    }
    return undefined;
  };
  const mismatch = (prepared: Prepared): VerifyResult => ({
    ok: false,
    reason: 'signature_mismatch',
    timestamp: prepared.timestamp,
  });

  function verify(payload: string | Uint8Array, header: string | null | undefined, now = nowSeconds()) {
    const prepared = prepare(payload, header, now, true);
    if (!prepared.ok) return prepared;
    for (const key of keys) {
      const found = match(prepared, key, hmacSync(scheme.hash, key.hmacKey, prepared.pieces));
      if (found) return found;
    }
    return mismatch(prepared);
  }

  return {
    secretLabels: keys.map((key) => key.label),
    verify,
    async verifyAsync(payload, header, now = nowSeconds()) {
      if (hasSyncCrypto) return verify(payload, header, now);
      const prepared = prepare(payload, header, now, false);
      if (!prepared.ok) return prepared;
      for (const key of keys) {
        const found = match(prepared, key, await hmacAsync(scheme.hash, key.hmacKey, prepared.pieces));
        if (found) return found;
      }
      return mismatch(prepared);
    },
  };
}

/**
 * The verifier of the last one-shot call, reused while the options are the same: callers of verifySignature
 * pass the same secret on every request, and resolving it (key import included) costs more than the HMAC
 * of a small body. Only immutable options are cached (a string secret, a number tolerance), so a mutated
 * array or object can never be served stale.
 */
let lastOneShot:
  | { secrets: string; tolerance: number | undefined; scheme: unknown; verifier: Verifier }
  | undefined;

function oneShotVerifier(options: VerifierOptions): Verifier {
  const { secrets, toleranceSeconds, scheme } = options;
  const cacheable = typeof secrets === 'string' && typeof toleranceSeconds !== 'object';
  const last = lastOneShot;
  if (
    cacheable &&
    last?.secrets === secrets &&
    last.tolerance === toleranceSeconds &&
    last.scheme === scheme
  ) {
    return last.verifier;
  }
  const verifier = createVerifier(options);
  if (cacheable) lastOneShot = { secrets, tolerance: toleranceSeconds, scheme, verifier };
  return verifier;
}

/**
 * Verifies a signature header against the raw body. Check order: header, timestamp, then HMAC.
 * Returns a reason instead of throwing; throws only for a payload that is not bytes or a string.
 */
export function verifySignature(options: VerifyOptions): VerifyResult {
  return oneShotVerifier(options).verify(options.payload, options.header, options.now);
}

/** verifySignature for runtimes without node:crypto (Web Crypto is async). */
export function verifySignatureAsync(options: VerifyOptions): Promise<VerifyResult> {
  return oneShotVerifier(options).verifyAsync(options.payload, options.header, options.now);
}

export interface SignOptions {
  payload: string | Uint8Array;
  /** An unset variable (undefined) throws a WebhookConfigError that says so. */
  secret: Secret | undefined;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  scheme?: SignatureScheme;
}

/** Signs a payload the way the service does: returns the header value `t=…,v1=…`. */
export function signPayload(options: SignOptions): string {
  const { pieces, scheme, key, timestamp } = prepareSigning(options);
  return `t=${timestamp},v1=${toHex(hmacSync(scheme.hash, key, pieces))}`;
}

export async function signPayloadAsync(options: SignOptions): Promise<string> {
  const { pieces, scheme, key, timestamp } = prepareSigning(options);
  return `t=${timestamp},v1=${toHex(await hmacAsync(scheme.hash, key, pieces))}`;
}

function prepareSigning(options: SignOptions) {
  if (typeof options.payload !== 'string' && !(options.payload instanceof Uint8Array)) {
    throw new RawBodyError(
      options.payload,
      'Sign the exact bytes you will send, for example JSON.stringify(event).',
    );
  }
  const timestamp = options.timestamp ?? nowSeconds();
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new WebhookConfigError('timestamp must be a non-negative whole number of unix seconds.');
  }
  const scheme = options.scheme ?? defaultScheme;
  const [key] = resolveKeys(options.secret);
  return {
    scheme,
    key: (key as Key).bytes,
    timestamp,
    pieces: scheme.signedContent(String(timestamp), options.payload),
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

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
