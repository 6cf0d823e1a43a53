import { type Awaitable, callUser, TIMED_OUT, withTimeout } from '../base/deadline.js';
import { WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import type { Report } from '../claims/report.js';
import type { ErrorContext } from '../contract/context.js';
import type { CryptoProvider } from '../crypto/provider.js';
import {
  MAX_TENANT_LENGTH,
  printableTenant,
  type TenantOf,
  type TenantSignature,
  type TenantSignatures,
} from '../pipeline/2-tenant.js';
import type { Rejection } from '../pipeline/ending.js';
import { createVerifier, type SignatureProfile, type Tolerance } from '../signature/index.js';
import type { Secrets } from '../signature/secrets.js';

/**
 * What a `secrets` lookup answers for a tenant it knows under another spelling: the tenant as it knows it (the
 * account's one name, `acme` for a request to `/webhooks/ACME` when the lookup ignores case) and its secrets.
 * The receiver keys its events on that name, and hands it to ctx.tenant, onError, logs and metrics, so that one
 * event is one run however a request spells its tenant.
 */
export interface TenantAccount {
  /** The tenant as the lookup knows it: a non-empty string of at most 256 characters. */
  tenant: string;
  /** Its secrets, in any form the `secrets` option takes; undefined or null: no such tenant. */
  secrets: Secrets | undefined | null;
}

/** What a `secrets` lookup answers: the tenant's secrets, or the tenant's own name and its secrets. */
export type TenantSecretsAnswer = Secrets | TenantAccount | undefined | null;

/**
 * The `secrets` option as a lookup: a tenant's secrets (then the tenant is keyed as the request spells it), or
 * `{ tenant, secrets }` with the tenant as the lookup knows it (needed when the lookup matches other spellings:
 * ignores case, trims, maps aliases), or undefined when the tenant is unknown. Any thenable.
 */
export type SecretsLookup = (tenant: string) => TenantSecretsAnswer | PromiseLike<TenantSecretsAnswer>;

/** How a `secrets` lookup is cached and waited for. */
export interface TenantSecretsOptions {
  /** How long a tenant's secrets are used before they are looked up again: a rotated secret is picked up within it. Default 300000 (5 min). */
  ttlMs?: number;
  /** How long a tenant the lookup did not know is answered 401 unknown_tenant without asking again. Default 30000. */
  negativeTtlMs?: number;
  /**
   * Known tenants kept at most, past it the least recently used goes; as many unknown ones are kept apart, so a
   * flood of made-up tenants never pushes a known one out. Default 10000.
   */
  maxTenants?: number;
  /** How long one lookup may take before the delivery is answered 503 tenant_lookup_failed. Default 2000. */
  timeoutMs?: number;
}

export interface ResolvedTenantSecrets {
  ttlMs: number;
  negativeTtlMs: number;
  maxTenants: number;
  timeoutMs: number;
}

const COUNT = rules.whole({ min: 1 });

export function resolveTenantSecrets(given: TenantSecretsOptions | undefined): ResolvedTenantSecrets {
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    throw new WebhookConfigError(
      'tenantSecrets must be an object: { ttlMs, negativeTtlMs, maxTenants, timeoutMs }.',
    );
  }
  const options = given ?? {};
  return {
    ttlMs: option('tenantSecrets.ttlMs', options.ttlMs, 300_000, COUNT),
    negativeTtlMs: option('tenantSecrets.negativeTtlMs', options.negativeTtlMs, 30_000, COUNT),
    maxTenants: option('tenantSecrets.maxTenants', options.maxTenants, 10_000, COUNT),
    timeoutMs: option('tenantSecrets.timeoutMs', options.timeoutMs, 2000, COUNT),
  };
}

/** What a tenant's signature is checked with: the receiver's profile, crypto and tolerance. */
export interface Verifying {
  profile: SignatureProfile;
  crypto: CryptoProvider | undefined;
  toleranceSeconds: Tolerance | undefined;
}

interface Entry {
  /** The tenant's signature, or the 401 of an unknown tenant. */
  readonly found: TenantSignature | Rejection;
  readonly expiresAt: number;
}

export interface TenantSecretsParts {
  tenantOf: TenantOf;
  lookup: SecretsLookup;
  options: ResolvedTenantSecrets;
  verifying: Verifying;
  report: Report;
  now: () => number;
  signatureOf: (verifier: ReturnType<typeof createVerifier>) => TenantSignature;
}

export interface TenantSecrets extends TenantSignatures {
  forget(tenant: string): void;
  /** Tenants cached right now (known and unknown). */
  readonly size: number;
}

/**
 * The tenants' signatures: looked up with the `secrets` function, cached (positive entries for ttlMs, unknown
 * tenants for negativeTtlMs, at most maxTenants, least recently used first out), one lookup at a time per
 * tenant (every delivery that comes while it runs waits for the same answer), each within timeoutMs. A failed
 * or late lookup is not cached: the next delivery asks again.
 */
export function createTenantSecrets(parts: TenantSecretsParts): TenantSecrets {
  return new TenantCache(parts);
}

class TenantCache implements TenantSecrets {
  readonly #parts: TenantSecretsParts;
  /** Tenants the lookup knew, and apart from them the ones it did not: made-up tenants never push a known one out. */
  readonly #known = new Map<string, Entry>();
  readonly #unknown = new Map<string, Entry>();
  readonly #flights = new Map<string, Promise<TenantSignature | Rejection>>();
  readonly tenantOf: TenantOf;
  readonly report: Report;

  constructor(parts: TenantSecretsParts) {
    this.#parts = parts;
    this.tenantOf = parts.tenantOf;
    this.report = parts.report;
  }

  get size(): number {
    return this.#known.size + this.#unknown.size;
  }

  async signatureOf(tenant: string, requestId: string): Promise<TenantSignature | Rejection> {
    return (
      this.#cached(this.#known, tenant) ??
      this.#cached(this.#unknown, tenant) ??
      this.#flights.get(tenant) ??
      this.#fly(tenant, requestId)
    );
  }

  forget(tenant: string): void {
    this.#known.delete(tenant);
    // And every spelling the lookup answered for under this name.
    for (const [named, entry] of this.#known)
      if ((entry.found as TenantSignature).tenant === tenant) this.#known.delete(named);
    this.#unknown.delete(tenant);
    // A lookup under way may have read the old secret: what it finds is used by its waiters, not kept.
    this.#flights.delete(tenant);
  }

  #cached(entries: Map<string, Entry>, tenant: string): TenantSignature | Rejection | undefined {
    const entry = entries.get(tenant);
    if (entry === undefined) return undefined;
    entries.delete(tenant);
    if (entry.expiresAt <= this.#parts.now()) return undefined;
    // Most recently used last: the first in the map's order is the one to go.
    entries.set(tenant, entry);
    return entry.found;
  }

  #fly(tenant: string, requestId: string): Promise<TenantSignature | Rejection> {
    const flights = this.#flights;
    const asked = Promise.resolve(callUser(() => this.#parts.lookup(tenant)));
    const flight: Promise<TenantSignature | Rejection> = withTimeout(
      asked,
      this.#parts.options.timeoutMs,
    ).then(
      (secrets) => {
        const current = flights.get(tenant) === flight;
        if (current) flights.delete(tenant);
        return this.#answerOf(secrets, tenant, requestId, current);
      },
      (cause: unknown) => {
        if (flights.get(tenant) === flight) flights.delete(tenant);
        return this.#failed(tenant, requestId, 'The secrets lookup failed', cause);
      },
    );
    flights.set(tenant, flight);
    return flight;
  }

  #answerOf(
    answer: TenantSecretsAnswer | typeof TIMED_OUT,
    tenant: string,
    requestId: string,
    keep: boolean,
  ): Awaitable<TenantSignature | Rejection> {
    const { options, verifying, signatureOf } = this.#parts;
    if (answer === TIMED_OUT) {
      return this.#failed(
        tenant,
        requestId,
        `The secrets lookup did not answer within ${options.timeoutMs} ms`,
      );
    }
    const account = accountOf(answer);
    if (typeof account === 'string') return this.#failed(tenant, requestId, account);
    const { secrets } = account;
    let found: TenantSignature | Rejection;
    if (secrets === undefined || secrets === null) {
      found = unknownTenant(tenant);
    } else {
      try {
        found = signatureOf(createVerifier({ ...verifying, secrets }));
      } catch (cause) {
        return this.#failed(tenant, requestId, 'The secrets looked up are not usable', cause);
      }
      if (account.tenant !== undefined) found = { ...found, tenant: account.tenant };
    }
    if (keep) this.#remember(tenant, found);
    return found;
  }

  #remember(tenant: string, found: TenantSignature | Rejection): void {
    const { options, now } = this.#parts;
    const unknown = 'stop' in found;
    const entries = unknown ? this.#unknown : this.#known;
    const ttl = unknown ? options.negativeTtlMs : options.ttlMs;
    entries.set(tenant, { found, expiresAt: now() + ttl });
    if (entries.size <= options.maxTenants) return;
    for (const oldest of entries.keys()) {
      entries.delete(oldest);
      if (entries.size <= options.maxTenants) break;
    }
  }

  async #failed(tenant: string, requestId: string, what: string, cause?: unknown): Promise<Rejection> {
    const context: ErrorContext = { requestId, reason: 'tenant_lookup_failed', tenant };
    const message = `${what} for tenant ${printableTenant(tenant)}.`;
    await this.report('tenant_lookup_failed', message, cause, context);
    return { stop: 'tenant_lookup_failed', message: `${message} Nothing was processed; retry later.` };
  }
}

/**
 * The lookup's answer as a tenant's name (when it gave one) and its secrets, or why it is not usable. A plain
 * object with `secrets` is an account; `{ live, test }` and every other form are the secrets themselves.
 */
function accountOf(
  answer: TenantSecretsAnswer,
): { tenant?: string; secrets: Secrets | undefined | null } | string {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer) || ArrayBuffer.isView(answer))
    return { secrets: answer };
  if (!('secrets' in answer)) return { secrets: answer as Secrets };
  const { tenant } = answer as { tenant?: unknown };
  if (typeof tenant !== 'string' || tenant.length === 0 || tenant.length > MAX_TENANT_LENGTH) {
    const got =
      typeof tenant === 'string' ? `a string of ${tenant.length} characters` : String(typeof tenant);
    return `The secrets lookup answered { tenant, secrets } whose tenant is ${got} (it must be the tenant's name, 1 to ${MAX_TENANT_LENGTH} characters)`;
  }
  return { tenant, secrets: answer.secrets };
}

function unknownTenant(tenant: string): Rejection {
  return {
    stop: 'unknown_tenant',
    message: `The secrets lookup knows no tenant ${printableTenant(tenant)}. Check the URL the service posts to for this account, or add the tenant's secret where the lookup reads it (then receiver.forgetSecrets(tenant) makes it count at once).`,
  };
}
