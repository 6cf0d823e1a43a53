import { type Awaitable, callUser } from '../base/awaitable.js';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import type { ErrorContext } from '../contract/context.js';
import type { CryptoProvider } from '../crypto/provider.js';
import { printableTenant, type TenantOf, type TenantSignatures } from '../pipeline/3-tenant.js';
import type { Signature } from '../pipeline/3-verify.js';
import type { Report } from '../pipeline/report.js';
import type { Stop } from '../pipeline/stop.js';
import { createVerifier, type SignatureProfile, type Tolerance } from '../signature/index.js';
import type { Secrets } from '../signature/secrets.js';

/** The `secrets` option as a lookup: a tenant's secrets, or undefined when the tenant is unknown. Any thenable. */
export type SecretsLookup = (tenant: string) => Secrets | undefined | PromiseLike<Secrets | undefined>;

/** How a `secrets` lookup is cached and waited for. */
export interface TenantSecretsOptions {
  /** How long a tenant's secrets are used before they are looked up again: a rotated secret is picked up within it. Default 300000 (5 min). */
  ttlMs?: number;
  /** How long a tenant the lookup did not know is answered 401 unknown_tenant without asking again. Default 30000. */
  negativeTtlMs?: number;
  /** Tenants kept at most; past it the least recently used goes. Default 10000. */
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
  readonly found: Signature | Stop;
  readonly expiresAt: number;
}

export interface TenantSecretsParts {
  tenantOf: TenantOf;
  lookup: SecretsLookup;
  options: ResolvedTenantSecrets;
  verifying: Verifying;
  report: Report;
  now: () => number;
  signatureOf: (verifier: ReturnType<typeof createVerifier>) => Signature;
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
  readonly #entries = new Map<string, Entry>();
  readonly #flights = new Map<string, Promise<Signature | Stop>>();
  readonly tenantOf: TenantOf;
  readonly report: Report;

  constructor(parts: TenantSecretsParts) {
    this.#parts = parts;
    this.tenantOf = parts.tenantOf;
    this.report = parts.report;
  }

  get size(): number {
    return this.#entries.size;
  }

  signatureOf(tenant: string, requestId: string): Awaitable<Signature | Stop> {
    const entry = this.#entries.get(tenant);
    if (entry !== undefined) {
      if (entry.expiresAt > this.#parts.now()) {
        // Most recently used last: the first in the map's order is the one to go.
        this.#entries.delete(tenant);
        this.#entries.set(tenant, entry);
        return entry.found;
      }
      this.#entries.delete(tenant);
    }
    return this.#flights.get(tenant) ?? this.#fly(tenant, requestId);
  }

  forget(tenant: string): void {
    this.#entries.delete(tenant);
    // A lookup under way may have read the old secret: what it finds is used by its waiters, not kept.
    this.#flights.delete(tenant);
  }

  #fly(tenant: string, requestId: string): Promise<Signature | Stop> {
    const flights = this.#flights;
    const asked = Promise.resolve(callUser(() => this.#parts.lookup(tenant)));
    const flight: Promise<Signature | Stop> = withTimeout(asked, this.#parts.options.timeoutMs).then(
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
    secrets: Secrets | undefined | typeof TIMED_OUT,
    tenant: string,
    requestId: string,
    keep: boolean,
  ): Awaitable<Signature | Stop> {
    const { options, verifying, signatureOf } = this.#parts;
    if (secrets === TIMED_OUT) {
      return this.#failed(
        tenant,
        requestId,
        `The secrets lookup did not answer within ${options.timeoutMs} ms`,
      );
    }
    let found: Signature | Stop;
    if (secrets === undefined || secrets === null) {
      found = unknownTenant(tenant);
    } else {
      try {
        found = signatureOf(createVerifier({ ...verifying, secrets }));
      } catch (cause) {
        return this.#failed(tenant, requestId, 'The secrets looked up are not usable', cause);
      }
    }
    if (keep) this.#remember(tenant, found);
    return found;
  }

  #remember(tenant: string, found: Signature | Stop): void {
    const { options, now } = this.#parts;
    const entries = this.#entries;
    const ttl = 'stop' in found ? options.negativeTtlMs : options.ttlMs;
    entries.set(tenant, { found, expiresAt: now() + ttl });
    if (entries.size <= options.maxTenants) return;
    for (const oldest of entries.keys()) {
      entries.delete(oldest);
      if (entries.size <= options.maxTenants) break;
    }
  }

  async #failed(tenant: string, requestId: string, what: string, cause?: unknown): Promise<Stop> {
    const context: ErrorContext = { requestId, reason: 'tenant_lookup_failed', tenant };
    const message = `${what} for tenant ${printableTenant(tenant)}.`;
    await this.report('tenant_lookup_failed', message, cause, context);
    return { stop: 'tenant_lookup_failed', message: `${message} Nothing was processed; retry later.` };
  }
}

function unknownTenant(tenant: string): Stop {
  return {
    stop: 'unknown_tenant',
    message: `The secrets lookup knows no tenant ${printableTenant(tenant)}. Check the URL the service posts to for this account, or add the tenant's secret where the lookup reads it (then receiver.forgetSecrets(tenant) makes it count at once).`,
  };
}
