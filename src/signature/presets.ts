import { WebhookConfigError } from '../base/errors.js';
import type { SignatureProfile } from './profile.js';
import { buildProfile } from './profile-build.js';
import {
  type BodySignedContent,
  resolveConfig,
  type SignatureProfileConfig,
  type TimestampSource,
} from './profile-config.js';
import type { OptionNames } from './profile-text.js';
import type { SignatureSyntax } from './reading.js';

export const DEFAULT_SIGNATURE_HEADER = 'webhook-signature';

/** The default profile is adjusted by the receiver's own options: its messages name those. */
const defaultOptions: OptionNames = (part) =>
  part === 'signature' ? 'set the signatureHeader option' : 'make a profile of your own with createProfile';

/** The service's preview format: `webhook-signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`. */
export const defaultProfile: SignatureProfile = buildProfile(
  resolveConfig({ name: 'default', signature: { header: DEFAULT_SIGNATURE_HEADER, syntax: 't-v1' } }),
  defaultOptions,
);

/**
 * Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp`, and
 * `webhook-signature: v1,<base64> v1,<base64>…` over `<id>.<timestamp>.<body>`, secret `whsec_<base64>`.
 */
export const standardWebhooks: SignatureProfile = buildProfile(
  resolveConfig({
    name: 'standard-webhooks',
    signature: { header: 'webhook-signature', syntax: 'v1-list' },
    timestamp: { header: 'webhook-timestamp' },
    id: { header: 'webhook-id' },
    encoding: 'base64',
    secretFormat: 'whsec',
  }),
  // The header names are the standard's own: another name means another format.
  (part) => `make a profile of your own with createProfile (its ${part}.header)`,
);

export interface BodySignatureOptions
  extends Omit<SignatureProfileConfig, 'signature' | 'timestamp' | 'name'> {
  name?: string;
  /** The top-level member holding the signature. Default `signature`. */
  field?: string;
  /** The member's syntax. Default `t-v1` (`t=<unix>,v1=<hex>`, as the service documents the field). */
  syntax?: SignatureSyntax;
  /** What `{body}` is: the body without the member. Default `raw-without-member`. */
  content?: BodySignedContent;
  /** Default `signature` (the member's `t=`); for example { bodyField: 'created_at' } with syntax `plain`. */
  timestamp?: TimestampSource;
}

/**
 * The signature travels in the event's top-level `signature` member (or `field`), by default as
 * `t=<unix>,v1=<hex HMAC-SHA256 of "<t>." + the body without that member>`.
 */
export function bodySignature(options: BodySignatureOptions = {}): SignatureProfile {
  const { field = 'signature', syntax = 't-v1', content = 'raw-without-member', name, ...rest } = options;
  const config = resolveConfig({
    ...rest,
    name: name ?? 'body-signature',
    signature: { bodyField: field, syntax, content },
  });
  const option = { signature: 'field', timestamp: 'timestamp', id: 'id' } as const;
  return buildProfile(config, (part) => `set bodySignature({ ${option[part]} })`);
}

/** The presets by the names the CLI's --profile takes. */
export const profilePresets: Readonly<Record<string, () => SignatureProfile>> = {
  default: () => defaultProfile,
  'standard-webhooks': () => standardWebhooks,
  'body-signature': () => bodySignature(),
};

/**
 * The profile a receiver or signer uses: `profile` when given, else the default one, its header renamed by
 * `signatureHeader` when given.
 */
export function resolveProfile(options: {
  profile?: SignatureProfile | undefined;
  signatureHeader?: string | undefined;
}): SignatureProfile {
  const { profile, signatureHeader } = options;
  if (profile !== undefined) {
    if (typeof profile?.read !== 'function') {
      throw new WebhookConfigError(
        'profile must be made by createProfile() or be a preset such as standardWebhooks.',
      );
    }
    if (signatureHeader !== undefined) {
      throw new WebhookConfigError(
        'Give either profile or signatureHeader: the profile already names its headers and algorithm.',
      );
    }
    return profile;
  }
  if (signatureHeader === undefined) return defaultProfile;
  const config = resolveConfig({ name: 'default', signature: { header: signatureHeader, syntax: 't-v1' } });
  return buildProfile(config, defaultOptions);
}
