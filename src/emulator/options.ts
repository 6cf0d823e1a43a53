import { WebhookConfigError } from '../base/errors.js';
import { type OptionRule, optionMistake, rules } from '../base/options.js';
import type { RetryPolicy } from '../sending/retry.js';
import type { SignatureProfile } from '../signature/index.js';
import { resolveKeys } from '../signature/secrets.js';
import type { WebhookAttempt } from './attempt-line.js';
import { allowedHostNames } from './host-guard.js';
import {
  checkKeysUnique,
  type EmulatorMode,
  type ModeOptions,
  type OrganizationOptions,
  type ResolvedMode,
  type ResolvedOrganization,
  resolveOrganizations,
} from './organizations.js';

export type { EmulatorMode, ModeOptions, ResolvedMode } from './organizations.js';

import { randomSeed } from './random.js';
import { describeIssue, seedData } from './schemas.js';

export interface ContactSeed {
  id?: string;
  name?: string;
  phone: string;
}

export interface EmulatorSeedData {
  /** Sender names approved for the organization; any other gets invalid_parameter. */
  senders?: string[];
  groups?: { id: string; name?: string; contacts: ContactSeed[] }[];
  /** `{{name}}` in a body is replaced by the contact's name. */
  templates?: { id: string; body: string }[];
}

export interface EmulatorOptions extends EmulatorSeedData {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: a development tool, never exposed. */
  host?: string;
  /**
   * Host names (no scheme, no port) the emulator answers to besides localhost, IP addresses and `host`, e.g.
   * the service name it has in a Docker network. Requests to any other name are answered 403: a web page that
   * points a name of its own at this machine (DNS rebinding) cannot read the console or act on it.
   */
  allowedHosts?: string[];
  /** The single organization's test mode (leave out with `organizations`). */
  test?: ModeOptions;
  /** The single organization's live mode (leave out with `organizations`). */
  live?: ModeOptions;
  /**
   * Several organizations, each with its own keys, endpoints and secrets: a message sent with one's key is
   * signed with its secret and posted to its endpoint. Default: one organization, `default`, made of `test`
   * and `live`. The senders, templates and groups are shared.
   */
  organizations?: OrganizationOptions[];
  /**
   * Called after each webhook attempt (the `emulate` command prints one line for each). A listener that
   * throws is ignored: it cannot stop a delivery.
   */
  onAttempt?: (attempt: WebhookAttempt) => void;
  /** When each message moves on: queued → submitted → delivered or failed. */
  schedule?: {
    submitMs?: number;
    resultMs?: number;
    /** A random extra 0…jitterMs on each step. */
    jitterMs?: number;
    /** Fraction of messages that fail (0…1). */
    failureRate?: number;
  };
  /** Seeds every random choice (failures, chaos, retry waits). Default: random, shown in `emulator.seed`. */
  seed?: number;
  /** The failure event's type: the preview does not name it. Default `message.failed`. */
  failureEvent?: string;
  /** Webhook retries: exponential backoff with full jitter, a random wait from 0 to min(cap, base·2^n). */
  retry?: { maxAttempts?: number; baseMs?: number; capMs?: number; timeoutMs?: number };
  /** Webhook requests in flight at once. Default 64. */
  concurrency?: number;
  chaos?: ChaosOptions;
  /** How webhooks are signed. Default: the receiver's default profile. */
  profile?: SignatureProfile;
}

/** Ways to test a receiver's replay safety; fractions are 0…1 of events (or of first attempts). */
export interface ChaosOptions {
  /** Fraction of events sent twice, the copies at the same time. */
  copies?: number;
  /** Holds each event up to this many ms before its first attempt, so they arrive out of order. */
  reorderMs?: number;
  /** A fixed delay before every event's first attempt. */
  delayMs?: number;
  /** Fraction of first attempts whose body is changed after signing (must be rejected, then retried). */
  tamper?: number;
  /** Fraction of first attempts signed an hour ago (must be rejected, then retried). */
  stale?: number;
  /**
   * Fraction of messages whose receipt (delivered or failed) is never sent: their status is only found by
   * asking the status path, as reconciliation does.
   */
  webhookLoss?: number;
}

export interface ResolvedOptions {
  port: number;
  host: string;
  allowedHosts: ReadonlySet<string>;
  /** The first organization's modes: the only ones without `organizations`. */
  modes: Record<EmulatorMode, ResolvedMode>;
  organizations: ResolvedOrganization[];
  onAttempt: ((attempt: WebhookAttempt) => void) | undefined;
  senders: Set<string>;
  groups: Map<string, { id: string; name: string; contacts: Required<ContactSeed>[] }>;
  templates: Map<string, string>;
  schedule: { submitMs: number; resultMs: number; jitterMs: number; failureRate: number };
  seed: number;
  failureEvent: string;
  retry: RetryPolicy;
  concurrency: number;
  chaos: Required<ChaosOptions>;
  profile: SignatureProfile | undefined;
}

/** What a fresh emulator knows: one approved sender, one template and a small group to send a campaign to. */
export const DEMO_DATA: Required<EmulatorSeedData> = {
  senders: ['Acme'],
  templates: [{ id: 'tmpl_welcome', body: 'Hello {{name}}, welcome to Acme.' }],
  groups: [
    {
      id: 'grp_demo',
      name: 'Demo customers',
      contacts: [
        { name: 'Ada', phone: '+15550100001' },
        { name: 'Grace', phone: '+15550100002' },
        { name: 'Linus', phone: '+15550100003' },
      ],
    },
  ],
};

/** A mistake in the options fails `startEmulator` at once, naming the option, not deep inside a delivery. */
function checkOption<T>(name: string, value: unknown, rule: OptionRule<T>): void {
  const mistake = optionMistake(name, value, rule);
  if (mistake) throw new WebhookConfigError(`emulator option ${mistake}`);
}

const MILLISECONDS = rules.number({ min: 0, unit: 'milliseconds' });
const ABOVE_ZERO = (expected: string) =>
  rules.that<number>(expected, (value) => typeof value === 'number' && value > 0);
const URL_RULE = rules.that<string | undefined>(
  'an http(s) URL',
  (value) => value === undefined || (typeof value === 'string' && /^https?:\/\/[^\s]+$/.test(value)),
);
const KEYS = rules.that<string[]>('one key or more', (value) => Array.isArray(value) && value.length > 0);

function validate(resolved: ResolvedOptions): ResolvedOptions {
  const { schedule, retry, chaos } = resolved;
  const fractions = {
    failureRate: schedule.failureRate,
    ...pick(chaos, 'copies', 'tamper', 'stale', 'webhookLoss'),
  };
  const check = checkOption;
  for (const [name, value] of Object.entries(fractions)) check(name, value, rules.fraction);
  const durations = {
    ...pick(schedule, 'submitMs', 'resultMs', 'jitterMs'),
    ...pick(retry, 'baseMs', 'capMs'),
    ...pick(chaos, 'reorderMs', 'delayMs'),
  };
  for (const [name, value] of Object.entries(durations)) check(name, value, MILLISECONDS);
  check('retry.timeoutMs', retry.timeoutMs, ABOVE_ZERO('a positive number of milliseconds'));
  check('retry.maxAttempts', retry.maxAttempts, rules.whole({ min: 1 }));
  check('concurrency', resolved.concurrency, rules.whole({ min: 1 }));
  if (resolved.organizations.length > 1) checkKeysUnique(resolved.organizations);
  const several = resolved.organizations.length > 1;
  for (const mode of resolved.organizations.flatMap((organization) => Object.values(organization.modes))) {
    validateMode(mode, several ? `organization ${mode.organization} ` : '');
  }
  return resolved;
}

function validateMode(mode: ResolvedMode, prefix: string): void {
  const { endpoint, rateLimit } = mode;
  const name = `${prefix}${mode.mode}`;
  checkOption(`${name}.endpoint`, endpoint, URL_RULE);
  checkOption(`${name}.rateLimit.requests`, rateLimit.requests, rules.number({ min: 1 }));
  checkOption(
    `${name}.rateLimit.windowSeconds`,
    rateLimit.windowSeconds,
    ABOVE_ZERO('a number of seconds over 0'),
  );
  checkOption(`${name}.keys`, mode.keys, KEYS);
  // Throws a WebhookConfigError that says what is wrong with the secret (never printing it).
  resolveKeys(mode.secret);
}

function pick<T extends object, K extends keyof T>(from: T, ...keys: K[]): Record<string, T[K]> {
  return Object.fromEntries(keys.map((key) => [key, from[key]]));
}

export function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  const data = seedData.safeParse(options);
  if (!data.success) throw new WebhookConfigError(`emulator data: ${describeIssue(data.error)}`);
  const groups = (options.groups ?? DEMO_DATA.groups).map((group) => ({
    id: group.id,
    name: group.name ?? group.id,
    contacts: group.contacts.map((contact, index) => ({
      id: contact.id ?? `cnt_${group.id.slice(4)}_${index + 1}`,
      name: contact.name ?? contact.phone,
      phone: contact.phone,
    })),
  }));
  const chaos = options.chaos ?? {};
  const organizations = resolveOrganizations(options);
  return validate({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    allowedHosts: allowedHostNames(options.host ?? '127.0.0.1', options.allowedHosts),
    modes: (organizations[0] as ResolvedOrganization).modes,
    organizations,
    onAttempt: options.onAttempt,
    senders: new Set(options.senders ?? DEMO_DATA.senders),
    groups: new Map(groups.map((group) => [group.id, group])),
    templates: new Map((options.templates ?? DEMO_DATA.templates).map((t) => [t.id, t.body])),
    schedule: { submitMs: 200, resultMs: 600, jitterMs: 200, failureRate: 0, ...options.schedule },
    seed: options.seed ?? randomSeed(),
    failureEvent: options.failureEvent ?? 'message.failed',
    retry: { maxAttempts: 6, baseMs: 100, capMs: 2000, timeoutMs: 10_000, ...options.retry },
    concurrency: options.concurrency ?? 64,
    chaos: { copies: 0, reorderMs: 0, delayMs: 0, tamper: 0, stale: 0, webhookLoss: 0, ...chaos },
    profile: options.profile,
  });
}
