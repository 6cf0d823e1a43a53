import { randomId } from '../base/bytes.js';
import { RawBodyError, WebhookConfigError } from '../base/errors.js';
import { defaultCryptoProvider } from '../crypto/default.js';
import type { CryptoProvider } from '../crypto/provider.js';
import { resolveProfile } from './presets.js';
import type { SignatureProfile, SignedDelivery } from './profile.js';
import { nowSeconds } from './profile.js';
import { type Key, resolveKeys, type Secret } from './secrets.js';

export interface SignOptions {
  /** The exact bytes you will send (or the text they encode). */
  payload: string | Uint8Array;
  /** An unset variable (undefined) throws a WebhookConfigError that says so. */
  secret: Secret | undefined;
  /** Unix seconds; defaults to now (a profile that reads the body's timestamp takes it from there). */
  timestamp?: number;
  /** The message id, for profiles that sign one (standardWebhooks); default a new `msg_…`. */
  id?: string;
  /** Default defaultProfile. */
  profile?: SignatureProfile;
  /** Older options adjusting the default profile (as the receiver's). */
  signatureHeader?: string;
  /** Default defaultCryptoProvider(); signRequest and signPayload need a synchronous one. */
  crypto?: CryptoProvider;
}

/** Everything to send, signed as the profile says: the headers (no content-type) and the body. */
export function signRequest(options: SignOptions): SignedDelivery {
  const { signing, crypto, key, profile } = prepare(options);
  if (!crypto.sync) {
    throw new WebhookConfigError(`The ${crypto.name} provider is asynchronous: use signRequestAsync.`);
  }
  return signing.deliver(
    crypto.hmac(key, profile.hash, profile.signedContent(signing.reading), profile.encoding),
  );
}

export async function signRequestAsync(options: SignOptions): Promise<SignedDelivery> {
  const { signing, crypto, key, profile } = prepare(options);
  return signing.deliver(
    await crypto.hmac(key, profile.hash, profile.signedContent(signing.reading), profile.encoding),
  );
}

/** The signature header's value (`t=…,v1=…` by default), for profiles whose signature travels in a header. */
export function signPayload(options: SignOptions): string {
  return headerValue(signRequest(options), options);
}

export async function signPayloadAsync(options: SignOptions): Promise<string> {
  return headerValue(await signRequestAsync(options), options);
}

function headerValue(delivery: SignedDelivery, options: SignOptions): string {
  const header = resolveProfile(options).signatureHeader;
  if (header === undefined) {
    throw new WebhookConfigError(
      'This profile signs inside the body: use signRequest, which returns the body to send.',
    );
  }
  return delivery.headers[header] as string;
}

function prepare(options: SignOptions) {
  if (typeof options.payload !== 'string' && !(options.payload instanceof Uint8Array)) {
    throw new RawBodyError(
      options.payload,
      'Sign the exact bytes you will send, for example JSON.stringify(event).',
    );
  }
  const profile = resolveProfile(options);
  const given = options.timestamp;
  if (given !== undefined && (!Number.isSafeInteger(given) || given < 0)) {
    throw new WebhookConfigError('timestamp must be a non-negative whole number of unix seconds.');
  }
  const crypto = options.crypto ?? defaultCryptoProvider();
  const [key] = resolveKeys(options.secret, profile.secretFormat);
  const fromBody = typeof profile.config.timestamp === 'object' && 'bodyField' in profile.config.timestamp;
  const signing = profile.prepareSigning({
    body: options.payload,
    timestamp: given ?? (fromBody ? undefined : nowSeconds()),
    id: options.id ?? (profile.config.id ? `msg_${randomId()}` : undefined),
  });
  return { profile, crypto, signing, key: crypto.prepareKey((key as Key).bytes, profile.hash) };
}
