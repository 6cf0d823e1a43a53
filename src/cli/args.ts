import { type ParseArgsConfig, parseArgs } from 'node:util';
import { WebhookConfigError } from '../base/errors.js';
import { type OptionRule, rules } from '../base/options.js';
import { DEFAULT_SIGNATURE_HEADER } from '../receiver/options.js';
import { profilePresets, resolveProfile, type SignatureProfile } from '../signature/index.js';
import { resolveKeys, type SecretFormat } from '../signature/secrets.js';

export const BIN = 'messaging-webhooks';

/** Where the tenant goes in a URL given to send, check or simulate. */
export const TENANT_PLACEHOLDER = '{tenant}';

export const TENANT_HELP = `  --tenant NAME     sign for one tenant of a multi-tenant receiver: ${TENANT_PLACEHOLDER} in the URL becomes NAME
                    (e.g. http://localhost:3000/webhooks/${TENANT_PLACEHOLDER}) and the secret is --secret or
                    WEBHOOK_SECRET_NAME (NAME in capitals, other characters as _), never WEBHOOK_SECRET`;

/** A mistake on the command line: printed as one line that says what to do, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command that talks to an endpoint shares. */
export const signingOptions = {
  secret: { type: 'string' },
  header: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** The signature format of the commands that sign (the receiver's `profile` option). */
export const profileOption = { profile: { type: 'string' } } as const satisfies Options;

export const PROFILE_HELP = `  --profile NAME    signature format: ${Object.keys(profilePresets).join(', ')} (default: default)`;

export const SIGNING_HELP = `  --secret S        the endpoint's signing secret (or set WEBHOOK_SECRET); never printed
${TENANT_HELP}
  --header NAME     signature header name of the default profile (default ${DEFAULT_SIGNATURE_HEADER})
${PROFILE_HELP}
  -h, --help        this help`;

export interface Command {
  name: string;
  summary: string;
  help: string;
  /** Resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

type Values<O extends Options> = { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string };

/** `--help` among a command's options: main prints that command's help instead of running it. */
export class HelpRequested extends Error {}

/** parseArgs in strict mode, its errors turned into one-line usage errors that name the fix. */
export function parse<O extends Options>(
  command: string,
  argv: string[],
  options: O,
): { values: Values<O>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    if ((values as { help?: boolean }).help) throw new HelpRequested();
    return { values: values as Values<O>, positionals };
  } catch (error) {
    if (error instanceof HelpRequested) throw error;
    // Node's text goes on with advice about '--'; its first sentence names the problem.
    const text = error instanceof Error ? error.message : String(error);
    const first = (text.split(/\.(\s|$)/)[0] ?? text).split('\n')[0];
    throw new UsageError(`${command}: ${first}. Run '${BIN} ${command} --help' for its options.`);
  }
}

/**
 * The command line of a command that signs deliveries to one endpoint (send, simulate, check): its own options
 * plus the signing ones, the URL, and the secret and header to sign with.
 */
export function parseDelivery<O extends Options>(
  command: string,
  argv: string[],
  options: O,
): { values: Values<O>; url: string; sign: { secret: string; profile: SignatureProfile } } {
  const { values, positionals } = parse(command, argv, {
    ...signingOptions,
    ...profileOption,
    tenant: { type: 'string' },
    ...options,
  });
  const signing = values as Values<typeof signingOptions & typeof profileOption> & { tenant?: string };
  const tenant = forTenant(command, signing.tenant, positionals[0], signing.secret);
  const given = tenant.url === undefined ? positionals : [tenant.url, ...positionals.slice(1)];
  const url = requireUrl(command, given);
  const profile = signingProfile(command, signing.profile, signing.header);
  const sign = { secret: requireSecret(command, tenant.secret, profile.secretFormat), profile };
  return { values: values as Values<O>, url, sign };
}

/** The profile named by --profile (a preset), with --header renaming the default profile's header. */
export function signingProfile(command: string, name: string | undefined, header?: string): SignatureProfile {
  const preset = profilePresets[name ?? 'default'];
  if (!preset || !Object.hasOwn(profilePresets, name ?? 'default')) {
    throw new UsageError(
      `${command}: unknown --profile '${name}'. Use one of: ${Object.keys(profilePresets).join(', ')}.`,
    );
  }
  if (header === undefined) return preset();
  if (name !== undefined && name !== 'default') {
    throw new UsageError(
      `${command}: --header renames the default profile's header; the ${name} profile names its own.`,
    );
  }
  try {
    return resolveProfile({ signatureHeader: header });
  } catch (error) {
    if (error instanceof WebhookConfigError) throw new UsageError(`${command}: --header: ${error.message}`);
    throw error;
  }
}

/** The secret from --secret or WEBHOOK_SECRET, checked for the usual mistakes before anything is sent. */
export function requireSecret(
  command: string,
  given: string | undefined,
  format: SecretFormat = 'text',
): string {
  const secret = given ?? process.env.WEBHOOK_SECRET;
  if (secret === undefined || secret === '') {
    throw new UsageError(
      `${command}: no secret. Pass --secret <signing secret of the endpoint> or set WEBHOOK_SECRET.`,
    );
  }
  try {
    resolveKeys(secret, format);
  } catch (error) {
    if (error instanceof WebhookConfigError) throw new UsageError(`${command}: ${error.message}`);
    throw error;
  }
  return secret;
}

export function requireUrl(command: string, positionals: string[]): string {
  const [url, extra] = positionals;
  if (url === undefined) {
    throw new UsageError(`${command}: no URL. Usage: ${BIN} ${command} <url> --secret S (see --help).`);
  }
  if (extra !== undefined) {
    throw new UsageError(`${command}: unexpected argument '${extra}'. Give one URL; quote JSON values.`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `${command}: '${url}' is not a URL. Give the full address, e.g. http://localhost:3000/webhooks.`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${command}: the URL must start with http:// or https://.`);
  }
  return parsed.href;
}

export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length > 0) {
    throw new UsageError(
      `${command}: unexpected argument '${positionals[0]}'. See '${BIN} ${command} --help'.`,
    );
  }
}

/** A whole number option within bounds, with a message naming the option when it is not. */
export function integer(
  command: string,
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
  unit = '',
): number {
  if (value === undefined) return fallback;
  return argument(command, name, value, Number(value), rules.whole({ min, max }), unit);
}

export function fraction(command: string, name: string, value: string | undefined): number {
  if (value === undefined) return 0;
  // Number('') is 0: an empty --rate is a mistake, not none.
  const number = value.trim() === '' ? Number.NaN : Number(value);
  return argument(command, name, value, number, rules.fraction, ' (0.3 = 30%)');
}

/** A number given on the command line, checked by `rule`; the message quotes the argument as typed. */
function argument(
  command: string,
  name: string,
  value: string,
  number: number,
  rule: OptionRule<number>,
  example = '',
): number {
  if (!rule.schema.safeParse(number).success) {
    throw new UsageError(`${command}: --${name} must be ${rule.expected}${example}, got '${value}'.`);
  }
  return number;
}

/** `WEBHOOK_SECRET_ACME` for acme, `WEBHOOK_SECRET_EU_WEST` for eu-west. */
export const secretVariable = (tenant: string) =>
  `WEBHOOK_SECRET_${tenant.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/**
 * The URL and secret for `--tenant`: the tenant put in the URL's placeholder (encoded as one path segment or
 * query value), and the secret from --secret or the tenant's own variable. Without --tenant, a URL with the
 * placeholder is a mistake: it would be sent as it is.
 */
export function forTenant(
  command: string,
  tenant: string | undefined,
  url: string | undefined,
  secret: string | undefined,
): { url: string | undefined; secret: string | undefined } {
  const placeholder = url?.includes(TENANT_PLACEHOLDER) === true;
  if (tenant === undefined) {
    if (placeholder) {
      throw new UsageError(
        `${command}: the URL has ${TENANT_PLACEHOLDER}: pass --tenant NAME to fill it in (see --help).`,
      );
    }
    return { url, secret };
  }
  if (tenant === '' || /[\p{Cc}\p{Cf}]/u.test(tenant)) {
    throw new UsageError(`${command}: --tenant needs a name, e.g. --tenant acme.`);
  }
  if (url !== undefined && !placeholder) {
    throw new UsageError(
      `${command}: --tenant ${tenant} needs ${TENANT_PLACEHOLDER} in the URL where the tenant goes, e.g. http://localhost:3000/webhooks/${TENANT_PLACEHOLDER}.`,
    );
  }
  const variable = secretVariable(tenant);
  const own = secret ?? process.env[variable];
  if (own === undefined || own === '') {
    throw new UsageError(
      `${command}: no secret for tenant ${tenant}. Pass --secret <its signing secret> or set ${variable}.`,
    );
  }
  return { url: url?.replaceAll(TENANT_PLACEHOLDER, encodeURIComponent(tenant)), secret: own };
}
