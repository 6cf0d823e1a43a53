import { WebhookConfigError } from '../base/errors.js';
import type { DigestEncoding, HashName } from '../crypto/provider.js';
import { type SignatureSyntax, syntaxes, syntaxNames } from './reading.js';
import type { SecretFormat } from './secrets.js';

/**
 * How the body is signed when the signature travels inside it:
 * - `raw-without-member` (default): the body's bytes with the one top-level signature member cut out, together
 *   with the comma that joins it to its neighbour (docs/signature-profiles.md, "The body without the signature
 *   member"); every other byte as sent.
 * - `json-without-member`: the same byte cut, kept so existing configurations work; nothing is re-serialized.
 */
export type BodySignedContent = 'raw-without-member' | 'json-without-member';

export type SignatureLocation =
  /** A header, in one of the syntaxes (default `t-v1`: `t=<unix>,v1=<signature>`). */
  | { header: string; syntax?: SignatureSyntax }
  /** A top-level string member of the JSON body, its value in one of the syntaxes (default `t-v1`). */
  | { bodyField: string; syntax?: SignatureSyntax; content?: BodySignedContent };

/** `signature`: the `t=` of a `t-v1` signature value. A header of unix seconds. A body field: ISO 8601 text or unix seconds. */
export type TimestampSource = 'signature' | { header: string } | { bodyField: string };

/** Everything about a signature format, as data: a new format is a new config, not new code. */
export interface SignatureProfileConfig {
  /** Names the profile in errors and diagnostics. */
  name: string;
  signature: SignatureLocation;
  /** Default `signature` for the `t-v1` syntax; required for the others. */
  timestamp?: TimestampSource;
  /** A header carrying the message id, signed with `{id}` and reported as `messageId`. */
  id?: { header: string };
  /** Default SHA-256. */
  hash?: HashName;
  /** How the signature is written. Default hex (read in either case). */
  encoding?: DigestEncoding;
  /** How secret strings become key bytes. Default `text` (their UTF-8 bytes). */
  secretFormat?: SecretFormat;
  /**
   * The signed content: `{body}` exactly once, `{timestamp}` and `{id}` at most once each, any literal text.
   * Default `{timestamp}.{body}`, or `{id}.{timestamp}.{body}` when `id` is set. For a body signature `{body}`
   * is the body without the signature member.
   */
  signedContent?: string;
}

/** A placeholder of the template: an object, so no literal text (such as `id`) can be taken for one. */
export interface Slot {
  readonly slot: 'id' | 'timestamp';
}
const ID_SLOT: Slot = { slot: 'id' };
const TIMESTAMP_SLOT: Slot = { slot: 'timestamp' };

export interface ContentTemplate {
  /** Literal text and slots before `{body}`, then after it. */
  before: readonly (string | Slot)[];
  after: readonly (string | Slot)[];
}

/** A validated config with every default filled in. */
export interface ResolvedConfig {
  name: string;
  signature:
    | { header: string; syntax: SignatureSyntax }
    | { bodyField: string; syntax: SignatureSyntax; content: BodySignedContent };
  timestamp: TimestampSource;
  id: { header: string } | undefined;
  hash: HashName;
  encoding: DigestEncoding;
  secretFormat: SecretFormat;
  template: ContentTemplate;
}

const HASHES: readonly HashName[] = ['SHA-256', 'SHA-384', 'SHA-512'];
const ENCODINGS: readonly DigestEncoding[] = ['hex', 'base64'];
const SECRET_FORMATS: readonly SecretFormat[] = ['text', 'whsec'];
const BODY_CONTENT: readonly BodySignedContent[] = ['raw-without-member', 'json-without-member'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks a config and fills in the defaults; every mistake throws a WebhookConfigError that says what to fix. */
export function resolveConfig(config: SignatureProfileConfig): ResolvedConfig {
  if (typeof config !== 'object' || config === null) fail('?', 'give a config object.');
  const name = config.name;
  if (typeof name !== 'string' || name.trim() === '')
    fail('?', 'give it a name (for example `name: "acme"`).');
  const signature = resolveLocation(name, config.signature);
  const timestamp = resolveTimestamp(name, config.timestamp, signature);
  const id =
    config.id === undefined ? undefined : { header: headerName(name, 'id.header', config.id?.header) };
  const hash = oneOf(name, 'hash', config.hash ?? 'SHA-256', HASHES);
  const encoding = oneOf(name, 'encoding', config.encoding ?? 'hex', ENCODINGS);
  const secretFormat = oneOf(name, 'secretFormat', config.secretFormat ?? 'text', SECRET_FORMATS);
  const fallback = id ? '{id}.{timestamp}.{body}' : '{timestamp}.{body}';
  const template = parseTemplate(name, config.signedContent ?? fallback, id !== undefined);
  return { name, signature, timestamp, id, hash, encoding, secretFormat, template };
}

function resolveLocation(name: string, location: SignatureLocation | undefined): ResolvedConfig['signature'] {
  if (location && 'header' in location && !('bodyField' in location)) {
    return {
      header: headerName(name, 'signature.header', location.header),
      syntax: oneOf(name, 'signature.syntax', location.syntax ?? 't-v1', syntaxNames),
    };
  }
  if (location && 'bodyField' in location && !('header' in location)) {
    return {
      bodyField: fieldName(name, 'signature.bodyField', location.bodyField),
      syntax: oneOf(name, 'signature.syntax', location.syntax ?? 't-v1', syntaxNames),
      content: oneOf(name, 'signature.content', location.content ?? 'raw-without-member', BODY_CONTENT),
    };
  }
  return fail(name, "signature must be { header: 'name', syntax? } or { bodyField: 'name', content? }.");
}

function resolveTimestamp(
  name: string,
  source: TimestampSource | undefined,
  signature: ResolvedConfig['signature'],
): TimestampSource {
  const timestamped = syntaxes[signature.syntax].carriesTimestamp;
  if (source === undefined || source === 'signature') {
    if (timestamped) return 'signature';
    return fail(
      name,
      "only a 't-v1' signature carries its timestamp: set timestamp to { header: 'webhook-timestamp' } or { bodyField: 'created_at' }.",
    );
  }
  if (typeof source === 'object' && source !== null && 'header' in source) {
    return { header: headerName(name, 'timestamp.header', source.header) };
  }
  if (typeof source === 'object' && source !== null && 'bodyField' in source) {
    return { bodyField: fieldName(name, 'timestamp.bodyField', source.bodyField) };
  }
  return fail(name, "timestamp must be 'signature', { header: 'name' } or { bodyField: 'name' }.");
}

function parseTemplate(name: string, template: unknown, hasId: boolean): ContentTemplate {
  if (typeof template !== 'string')
    fail(name, 'signedContent must be a string such as "{timestamp}.{body}".');
  const parts = template.split(/(\{[^}]*\})/).filter((part) => part !== '');
  const bodyAt = parts.indexOf('{body}');
  if (bodyAt === -1 || parts.lastIndexOf('{body}') !== bodyAt) {
    fail(name, `signedContent must contain {body} exactly once, got "${template}".`);
  }
  const slot = (part: string): string | Slot => {
    if (!part.startsWith('{')) return part;
    if (part === '{timestamp}') return TIMESTAMP_SLOT;
    if (part === '{id}') {
      if (!hasId)
        fail(name, "signedContent uses {id}: set id to { header: 'webhook-id' } (where the id travels).");
      return ID_SLOT;
    }
    return fail(name, `signedContent has an unknown placeholder ${part}: use {id}, {timestamp} and {body}.`);
  };
  const before = parts.slice(0, bodyAt).map(slot);
  const after = parts.slice(bodyAt + 1).map(slot);
  for (const repeated of [ID_SLOT, TIMESTAMP_SLOT]) {
    if ([...before, ...after].filter((part) => part === repeated).length > 1) {
      fail(name, `signedContent may use {${repeated.slot}} once.`);
    }
  }
  return { before, after };
}

function headerName(name: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || !TOKEN.test(value)) {
    fail(name, `${option} must be an HTTP header name (letters, digits, '-'), got ${JSON.stringify(value)}.`);
  }
  return value.toLowerCase();
}

function fieldName(name: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    fail(name, `${option} must be the name of a top-level body field, got ${JSON.stringify(value)}.`);
  }
  return value;
}

function oneOf<T extends string>(name: string, option: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    fail(
      name,
      `${option} must be one of ${allowed.map((v) => `'${v}'`).join(', ')}, got ${JSON.stringify(value)}.`,
    );
  }
  return value as T;
}

function fail(name: string, message: string): never {
  throw new WebhookConfigError(`Signature profile '${name}': ${message}`);
}
