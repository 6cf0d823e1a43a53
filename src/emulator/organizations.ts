import { WebhookConfigError } from '../base/errors.js';
import { createId } from '../events/ids.js';

export type EmulatorMode = 'test' | 'live';

/** What each mode has of its own, as in the service: keys, webhook endpoint, signing secret and quota. */
export interface ModeOptions {
  /** API keys accepted as `Authorization: Bearer <key>`. Default `sk_test_emulator` / `sk_live_emulator`, or `sk_test_<name>` / `sk_live_<name>` in a named organization. */
  keys?: string[];
  /** The webhook endpoint events of this mode are sent to. Without one, events are recorded, not sent. */
  endpoint?: string;
  /** The endpoint's signing secret. Default: a random `whsec_…` (read it back from `emulator.modes`). */
  secret?: string;
  /** The quota: requests per key in a window, past which any endpoint answers 429 rate_limited. */
  rateLimit?: { requests: number; windowSeconds: number };
}

export interface ResolvedMode {
  organization: string;
  mode: EmulatorMode;
  keys: string[];
  endpoint: string | undefined;
  secret: string;
  rateLimit: { requests: number; windowSeconds: number };
}

/**
 * One organization of the service: its own API keys, and for each mode its own webhook endpoint and signing
 * secret. A platform that receives webhooks for many accounts runs one emulator with one organization per
 * account, and a message sent with an organization's key is signed with that organization's secret and posted
 * to its endpoint.
 */
export interface OrganizationOptions {
  /** Shown in the console and the terminal, and the default keys' suffix: `sk_test_<name>`, `sk_live_<name>`. */
  name: string;
  test?: ModeOptions;
  live?: ModeOptions;
}

export interface ResolvedOrganization {
  name: string;
  modes: Record<EmulatorMode, ResolvedMode>;
}

/** The organization of an emulator started without `organizations`. */
export const DEFAULT_ORGANIZATION = 'default';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

function resolveMode(
  organization: string,
  mode: EmulatorMode,
  keySuffix: string,
  given: ModeOptions = {},
): ResolvedMode {
  return {
    organization,
    mode,
    keys: given.keys ?? [`sk_${mode}_${keySuffix}`],
    endpoint: given.endpoint,
    secret: given.secret ?? createId('whsec_'),
    rateLimit: given.rateLimit ?? { requests: mode === 'test' ? 100 : 1000, windowSeconds: 1 },
  };
}

/** The organizations to run: the ones given, or one (`default`) made of the top-level `test` and `live`. */
export function resolveOrganizations(options: {
  organizations?: OrganizationOptions[];
  test?: ModeOptions;
  live?: ModeOptions;
}): ResolvedOrganization[] {
  const given = options.organizations;
  if (given === undefined) {
    const modes = {
      test: resolveMode(DEFAULT_ORGANIZATION, 'test', 'emulator', options.test),
      live: resolveMode(DEFAULT_ORGANIZATION, 'live', 'emulator', options.live),
    };
    return [{ name: DEFAULT_ORGANIZATION, modes }];
  }
  if (!Array.isArray(given) || given.length === 0) {
    throw new WebhookConfigError(
      'emulator option organizations must list one organization or more, e.g. [{ name: "acme", test: { endpoint, secret } }].',
    );
  }
  if (options.test !== undefined || options.live !== undefined) {
    throw new WebhookConfigError(
      'emulator options test and live are for a single organization: with organizations, give each its own test and live.',
    );
  }
  const seen = new Set<string>();
  return given.map((organization) => {
    const name = organization?.name;
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw new WebhookConfigError(
        `emulator option organizations[].name must be 1 to 63 letters, digits, - or _ (got ${JSON.stringify(name)}).`,
      );
    }
    if (seen.has(name)) throw new WebhookConfigError(`emulator organization ${name} is listed twice.`);
    seen.add(name);
    return {
      name,
      modes: {
        test: resolveMode(name, 'test', name, organization.test),
        live: resolveMode(name, 'live', name, organization.live),
      },
    };
  });
}

/** An API key names one organization and mode: the same key in two would make the sender ambiguous. */
export function checkKeysUnique(organizations: ResolvedOrganization[]): void {
  const owners = new Map<string, string>();
  for (const organization of organizations) {
    for (const mode of Object.values(organization.modes)) {
      for (const key of mode.keys) {
        const owner = `${organization.name} ${mode.mode}`;
        const other = owners.get(key);
        if (other !== undefined) {
          throw new WebhookConfigError(
            `emulator API key ${key} is given to both ${other} and ${owner}: give each organization and mode its own keys.`,
          );
        }
        owners.set(key, owner);
      }
    }
  }
}
