import type { HeaderSource } from '../contract/request.js';
import type { SignedRequestParts, VerifyResult } from './profile.js';
import type { ModeSecrets, Secret, SecretList, Secrets } from './secrets.js';
import { createVerifier, type Tolerance, type Verifier, type VerifierOptions } from './verifier.js';

export interface VerifyOptions extends VerifierOptions {
  /** The raw body exactly as received: bytes, or the string the bytes decode to. */
  payload: string | Uint8Array;
  /** The signature header's value, for profiles that read that one header (the default). */
  header?: string | null | undefined;
  /** All the request's headers: needed by profiles that read several (standardWebhooks). */
  headers?: HeaderSource | undefined;
  /** Current time in unix seconds; defaults to the clock. */
  now?: number | undefined;
}

/**
 * Verifies a request's signature against the raw body. Check order: signature parts, timestamp, then HMAC.
 * Returns a reason instead of throwing; throws only for a payload that is not bytes or a string. Needs a
 * synchronous crypto provider (node:crypto); verifySignatureAsync works everywhere.
 */
export function verifySignature(options: VerifyOptions): VerifyResult {
  const verifier = oneShotVerifier(options);
  const result = verifier.verify(requestOf(options, verifier), options.now);
  if (result instanceof Promise) {
    result.catch(() => {});
    throw new Error(`The ${verifier.crypto.name} provider is asynchronous: use verifySignatureAsync.`);
  }
  return result;
}

export async function verifySignatureAsync(options: VerifyOptions): Promise<VerifyResult> {
  const verifier = oneShotVerifier(options);
  return verifier.verify(requestOf(options, verifier), options.now);
}

function requestOf(options: VerifyOptions, verifier: Verifier): SignedRequestParts {
  const { headers, header, payload } = options;
  if (headers !== undefined) return { headers, body: payload };
  return { headers: new SingleHeader(verifier.profile.signatureHeader, header ?? null), body: payload };
}

/** The one header the one-shot API was given, as a header source (one small object, no closure). */
class SingleHeader {
  constructor(
    private readonly name: string | undefined,
    private readonly value: string | null,
  ) {}

  get(name: string): string | null {
    return name === this.name ? this.value : null;
  }
}

/**
 * The verifier of the last one-shot call, reused while the options are the same: callers of verifySignature
 * pass the same secrets on every request, and resolving them (key import included) costs more than the HMAC
 * of a small body. Secrets and tolerance are compared by value against a copy taken when the verifier was
 * made, so an array or object mutated since can never be served stale.
 */
let last:
  | {
      secrets: Secrets;
      tolerance: Tolerance | undefined;
      options: VerifierOptions;
      verifier: Verifier;
    }
  | undefined;

function oneShotVerifier(options: VerifierOptions): Verifier {
  const cached = last;
  if (
    cached !== undefined &&
    cached.options.profile === options.profile &&
    cached.options.signatureHeader === options.signatureHeader &&
    cached.options.crypto === options.crypto &&
    sameTolerance(cached.tolerance, options.toleranceSeconds) &&
    sameSecrets(cached.secrets, options.secrets)
  ) {
    return cached.verifier;
  }
  const verifier = createVerifier(options);
  last = {
    secrets: copySecrets(options.secrets as Secrets),
    tolerance:
      typeof options.toleranceSeconds === 'object'
        ? { ...options.toleranceSeconds }
        : options.toleranceSeconds,
    options: {
      secrets: undefined,
      profile: options.profile,
      signatureHeader: options.signatureHeader,
      crypto: options.crypto,
    },
    verifier,
  };
  return verifier;
}

function sameTolerance(copy: Tolerance | undefined, given: Tolerance | undefined): boolean {
  if (typeof copy !== 'object' || typeof given !== 'object') return copy === given;
  return copy.past === given.past && copy.future === given.future;
}

function copySecrets(secrets: Secrets): Secrets {
  if (isList(secrets)) return copyList(secrets);
  const { live, test } = secrets as ModeSecrets;
  return {
    live: live === undefined ? undefined : copyList(live),
    test: test === undefined ? undefined : copyList(test),
  } as Secrets;
}

function copyList(list: SecretList): SecretList {
  const copyOne = (secret: Secret) => (secret instanceof Uint8Array ? secret.slice() : secret);
  return Array.isArray(list) ? list.map(copyOne) : copyOne(list as Secret);
}

function sameSecrets(copy: Secrets, given: Secrets | undefined): boolean {
  // The usual call passes one secret string: immutable, so equal is the same.
  if (typeof given === 'string') return copy === given;
  if (given === undefined || given === null) return false;
  if (isList(copy) || isList(given)) return isList(copy) && isList(given) && sameList(copy, given);
  const a = copy as ModeSecrets;
  const b = given as ModeSecrets;
  return sameOptionalList(a.live, b.live) && sameOptionalList(a.test, b.test);
}

function sameOptionalList(a: SecretList | undefined, b: SecretList | undefined): boolean {
  return a === undefined || b === undefined ? a === b : sameList(a, b);
}

function sameList(a: SecretList, b: SecretList): boolean {
  if (!Array.isArray(a) || !Array.isArray(b))
    return !Array.isArray(a) && !Array.isArray(b) && sameSecret(a as Secret, b as Secret);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameSecret(a[i], b[i])) return false;
  return true;
}

function sameSecret(a: Secret, b: Secret): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (!(b instanceof Uint8Array) || a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function isList(secrets: Secrets): secrets is SecretList {
  return typeof secrets !== 'object' || secrets instanceof Uint8Array || Array.isArray(secrets);
}
