import { utf8Text } from './base/bytes.js';
import { WebhookConfigError } from './base/errors.js';
import type { CryptoProvider } from './crypto/provider.js';
import { type SignatureProfile, signRequest } from './signature/index.js';
import type { Secret } from './signature/secrets.js';

export { createId, createPhoneNumber, isoTimestamp } from './events/ids.js';
// Types the functions above name, so a test can name them too.
export type { DataOf } from './events/sample-event.js';
export { createEvent, type EventOverrides, type TestEvent } from './events/sample-event.js';
export { signPayload, signPayloadAsync, signRequest, signRequestAsync } from './signature/index.js';
export type { SignedDelivery } from './signature/profile.js';
export type { Secret } from './signature/secrets.js';
export type { SignOptions } from './signature/signer.js';

export interface SignedRequestOptions {
  /** An unset variable (undefined) throws a WebhookConfigError that says so. */
  secret: Secret | undefined;
  /** Unix seconds; default now. */
  timestamp?: number;
  /** Used by `request`; default http://localhost/webhooks. */
  url?: string;
  /** The receiver's profile: sign the way it verifies. Default defaultProfile. */
  profile?: SignatureProfile;
  /** The message id, for profiles that sign one (standardWebhooks); default a new `msg_…`. */
  id?: string;
  /** Default defaultCryptoProvider(); must be synchronous (node:crypto). */
  crypto?: CryptoProvider;
  /** The default profile's header name (older option, as the receiver's signatureHeader). */
  signatureHeader?: string;
}

export interface SignedRequest {
  /** The exact text to send, as signed (with its signature member for a body signature): send it unchanged. */
  body: string;
  /** content-type and the profile's headers. */
  headers: Record<string, string>;
  /** The same delivery as a Web Request (POST to `url`). A new Request on each access: a body is read once. */
  readonly request: Request;
}

/**
 * Serializes the event once, signs exactly those bytes and returns them with the headers, so a test sends
 * what was signed. A string event is taken as the body as it is.
 */
export function createSignedRequest(event: unknown, options: SignedRequestOptions): SignedRequest {
  const signed = signRequest({
    payload: typeof event === 'string' ? event : JSON.stringify(event),
    secret: options.secret,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.crypto ? { crypto: options.crypto } : {}),
    ...(options.signatureHeader === undefined ? {} : { signatureHeader: options.signatureHeader }),
  });
  const body = utf8Text(signed.body);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...signed.headers };
  const url = options.url ?? 'http://localhost/webhooks';
  return {
    body,
    headers,
    get request() {
      return new Request(url, { method: 'POST', headers, body });
    },
  };
}

export interface TenantSignerOptions {
  /** Each tenant's secret (a list for rotation, or `{ live, test }`), or a function that gives it. */
  secrets: Record<string, Secret> | ((tenant: string) => Secret | undefined);
  /** The receiver's route with `{tenant}` where the tenant goes; default http://localhost/webhooks/{tenant}. */
  url?: string;
}

/** Signs for one tenant: its secret, its URL. */
export type TenantSigner = (
  tenant: string,
  event: unknown,
  options?: Omit<SignedRequestOptions, 'secret' | 'url'>,
) => SignedRequest;

/**
 * For a multi-tenant receiver: signs each event with the named tenant's own secret and aims it at the tenant's
 * URL (`{tenant}` filled in, encoded as one path segment). A tenant without a secret throws a WebhookConfigError
 * that names it, so a test never sends a delivery signed with nothing.
 */
export function createTenantSigner(options: TenantSignerOptions): TenantSigner {
  const template = options.url ?? 'http://localhost/webhooks/{tenant}';
  const { secrets } = options;
  return (tenant, event, rest = {}) => {
    const secret =
      typeof secrets === 'function'
        ? secrets(tenant)
        : Object.hasOwn(secrets, tenant)
          ? secrets[tenant]
          : undefined;
    if (secret === undefined) {
      throw new WebhookConfigError(`createTenantSigner: no secret for tenant ${JSON.stringify(tenant)}.`);
    }
    const url = template.replaceAll('{tenant}', encodeURIComponent(tenant));
    return createSignedRequest(event, { ...rest, secret, url });
  };
}
