import type { Report } from '../claims/report.js';
import { signatureOf } from '../pipeline/1-read-verify.js';
import { createVerifier, type Verifier, type VerifyResult } from '../signature/index.js';
import type { Secrets } from '../signature/secrets.js';
import { cryptoOf } from '../signature/verifier.js';
import type { ResolvedOptions } from './options.js';
import { createTenantSecrets, resolveTenantSecrets, type TenantSecrets } from './tenant-secrets.js';

type Verifying = Pick<
  ResolvedOptions<never, unknown>,
  'secrets' | 'profile' | 'crypto' | 'toleranceSeconds' | 'tenant' | 'tenantSecrets' | 'now'
>;

/**
 * The receiver's verifier: of its static secrets, or, with a `secrets` lookup, one that has the profile and the
 * crypto only (for the dedupe key of an event without an id, and diagnostics) and verifies nothing: each
 * tenant's verifier does.
 */
export function verifierOf(options: Verifying): Verifier {
  const { profile, crypto, toleranceSeconds } = options;
  if (typeof options.secrets !== 'function') {
    return createVerifier({ profile, crypto, toleranceSeconds, secrets: options.secrets as Secrets });
  }
  const none = (): VerifyResult => ({ ok: false, reason: 'signature_mismatch' });
  return {
    profile,
    crypto: cryptoOf({ crypto }),
    secretLabels: [],
    verify: none,
    verifyAsync: async () => none(),
    signedBody: (request) => profile.read(request.headers, request.body).body,
  };
}

/** With a `secrets` lookup: the tenants' signatures, looked up and cached. */
export function tenantSecretsOf(options: Verifying, report: Report): TenantSecrets | undefined {
  const lookup = options.secrets;
  if (typeof lookup !== 'function' || options.tenant === undefined) return undefined;
  const { profile, crypto, toleranceSeconds } = options;
  return createTenantSecrets({
    tenantOf: options.tenant,
    lookup,
    options: resolveTenantSecrets(options.tenantSecrets),
    verifying: { profile, crypto, toleranceSeconds },
    report,
    now: options.now,
    signatureOf,
  });
}
