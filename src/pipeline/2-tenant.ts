import { escapeControls } from '../base/printable.js';
import type { Report } from '../claims/report.js';
import { getHeader, type HeaderSource } from '../contract/request.js';
import type { Read, Signature } from './1-read-verify.js';
import type { Rejection } from './ending.js';

/**
 * What the receiver's `tenant` option reads the tenant from. The body is as received and not yet verified: a
 * tenant read from it may only choose which secret to check the signature with, and the signature then proves it.
 */
export interface TenantRequest {
  /** The route's parameters as the framework matched them (`/webhooks/:account` → `{ account: 'acme' }`); `{}` when none. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** A header, case-insensitively; repeated headers are joined with a comma. */
  header(name: string): string | undefined;
  /** The request target as received (a path with its query, or an absolute URL), when the adapter gave it. */
  readonly url: string | undefined;
  /** The raw body, exactly as received (not verified yet). */
  readonly body: string | Uint8Array;
}

/** Which tenant a request names, from the receiver's `tenant` option. */
export type TenantOf = (request: TenantRequest) => string | undefined;

/** A read request and the tenant it named. */
export interface Tenanted extends Read {
  readonly tenant: string;
  /** Once its signature did not verify: the labels of the tenant's secrets tried, for the diagnostics. */
  readonly secretLabels?: readonly string[];
}

/** A tenant's signature, and the tenant's name as its lookup knows it when that differs from the request's. */
export interface TenantSignature extends Signature {
  /** The tenant as the secrets lookup answered for it (`{ tenant, secrets }`); its events are keyed on it. */
  readonly tenant?: string;
}

/** The tenants' signatures, looked up and cached by the receiver (receiver/tenant-secrets.ts). */
export interface TenantSignatures {
  readonly tenantOf: TenantOf;
  /** The signature that checks this tenant's deliveries, or why there is none (unknown, or the lookup failed). */
  signatureOf(tenant: string, requestId: string): Promise<TenantSignature | Rejection>;
  report: Report;
}

/** Longer tenants are refused: each one a cache entry, and a URL can be long. */
export const MAX_TENANT_LENGTH = 256;

const NO_PARAMS: Readonly<Record<string, string | undefined>> = Object.freeze({});

/** A tenant as a message or a log shows it: quoted, control characters escaped, never acted on by a terminal. */
export function printableTenant(tenant: string): string {
  return escapeControls(JSON.stringify(tenant));
}

/**
 * Names the tenant of a request with the `tenant` option (synchronous, user code). A request that names none is
 * 401 unknown_tenant; a `tenant` function that throws is this side's failure: 503 tenant_lookup_failed, onError
 * is told, and the service's retry finds it once the function is fixed.
 */
export function nameTenant(read: Read, tenants: TenantSignatures): Tenanted | Rejection | Promise<Rejection> {
  let named: unknown;
  try {
    named = tenants.tenantOf(tenantRequest(read));
  } catch (cause) {
    const message = 'The tenant option threw while reading the tenant from the request.';
    const { requestId } = read;
    return tenants
      .report('tenant_lookup_failed', message, cause, { requestId, reason: 'tenant_lookup_failed' })
      .then(() => ({
        stop: 'tenant_lookup_failed',
        message: `${message} Nothing was processed; retry later.`,
      }));
  }
  if (typeof named !== 'string' || named.length === 0) {
    const what =
      named === '' ? 'an empty string' : typeof named === 'string' ? 'a string' : String(typeof named);
    return {
      stop: 'unknown_tenant',
      message: `This request names no tenant: the tenant option returned ${what}. Post to the URL that names the account (for example /webhooks/<account>), or check what the tenant option reads.`,
    };
  }
  if (named.length > MAX_TENANT_LENGTH) {
    return {
      stop: 'unknown_tenant',
      message: `The tenant this request names is longer than ${MAX_TENANT_LENGTH} characters; no tenant is. Check the URL the service posts to.`,
    };
  }
  return { request: read.request, requestId: read.requestId, body: read.body, tenant: named };
}

/**
 * The request under the tenant its lookup answered for: keyed, logged and counted as that one, so that every
 * spelling of a tenant the lookup accepts (`ACME`, `acme`) is one tenant.
 */
function asLookedUp(named: Tenanted, found: TenantSignature): Tenanted {
  const { tenant } = found;
  return tenant === undefined || tenant === named.tenant ? named : { ...named, tenant };
}

/** One object per request, its method on the prototype: no closure made per request. */
class RequestView implements TenantRequest {
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly url: string | undefined;
  readonly body: string | Uint8Array;
  readonly #headers: HeaderSource;

  constructor(read: Read) {
    const { request } = read;
    this.params = request.params ?? NO_PARAMS;
    this.url = request.url;
    this.body = read.body;
    this.#headers = request.headers ?? {};
  }

  header(name: string): string | undefined {
    return getHeader(this.#headers, name);
  }
}

function tenantRequest(read: Read): TenantRequest {
  return new RequestView(read);
}

type TenantFound = { signed: Tenanted; signature: Signature } | { reached: Read | Tenanted; stop: Rejection };

/** The tenant's signature: the tenant the request names, then its secrets (cached, or looked up). */
export async function tenantSignature(read: Read, tenants: TenantSignatures): Promise<TenantFound> {
  const named = await nameTenant(read, tenants);
  if ('stop' in named) return { reached: read, stop: named };
  const found = await tenants.signatureOf(named.tenant, read.requestId);
  return 'stop' in found
    ? { reached: named, stop: found }
    : { signed: asLookedUp(named, found), signature: found };
}

/** A tenant's request that did not verify, with the labels of the secrets it was checked with. */
export function tried(signed: Read | Tenanted, signature: Signature): Read | Tenanted {
  return { ...signed, secretLabels: signature.secretLabels ?? [] };
}
