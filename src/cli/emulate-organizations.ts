import type { ModeOptions } from '../emulator/options.js';
import type { OrganizationOptions } from '../emulator/organizations.js';
import { requireSecret, requireUrl, secretVariable, UsageError } from './args.js';

/** The single organization's options, which --org replaces. */
const SINGLE = ['endpoint', 'secret', 'test-key', 'live-endpoint', 'live-secret', 'live-key'] as const;

/**
 * The organizations of `--org NAME=URL` (repeated), each with its secret from `--org-secret NAME=S` or
 * WEBHOOK_SECRET_NAME. Keys are the emulator's defaults for a named organization: sk_test_NAME, sk_live_NAME.
 */
export function organizationsFrom(
  orgs: string[],
  secrets: string[],
  get: (name: (typeof SINGLE)[number]) => string | undefined,
  rateLimit: ModeOptions['rateLimit'],
): OrganizationOptions[] {
  const single = SINGLE.find((name) => get(name) !== undefined);
  if (single !== undefined) {
    throw new UsageError(
      `emulate: --${single} is for a single organization; with --org, give each organization its URL (--org NAME=URL) and secret (--org-secret NAME=S).`,
    );
  }
  if (orgs.length === 0)
    throw new UsageError('emulate: --org-secret names an organization: add --org NAME=URL.');
  const given = new Map(secrets.map((pair) => split(pair, '--org-secret', 'NAME=S')));
  const organizations = orgs.map((pair): OrganizationOptions => {
    const [name, url] = split(pair, '--org', 'NAME=URL');
    const secret = given.get(name) ?? process.env[secretVariable(name)];
    if (secret === undefined || secret === '') {
      throw new UsageError(
        `emulate: no secret for organization ${name}. Pass --org-secret ${name}=<its signing secret> or set ${secretVariable(name)}.`,
      );
    }
    given.delete(name);
    const test: ModeOptions = {
      endpoint: requireUrl('emulate', [url]),
      secret: requireSecret('emulate', secret),
      ...(rateLimit ? { rateLimit } : {}),
    };
    return { name, test, ...(rateLimit ? { live: { rateLimit } } : {}) };
  });
  const [stray] = given.keys();
  if (stray !== undefined) {
    throw new UsageError(
      `emulate: --org-secret names ${stray}, which no --org lists: add --org ${stray}=URL.`,
    );
  }
  return organizations;
}

function split(pair: string, option: string, shape: string): [string, string] {
  const at = pair.indexOf('=');
  const name = pair.slice(0, at);
  if (at <= 0 || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(name)) {
    throw new UsageError(
      `emulate: ${option} takes ${shape}, the name 1 to 63 letters, digits, - or _ (e.g. ${option} acme=…).`,
    );
  }
  return [name, pair.slice(at + 1)];
}
