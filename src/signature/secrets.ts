import { fromBase64 } from '../base/bytes.js';
import { WebhookConfigError } from '../base/errors.js';

/** A secret as the service shows it (its UTF-8 bytes are the key) or as raw key bytes. */
export type Secret = string | Uint8Array;
export type SecretList = Secret | readonly Secret[];
/**
 * Live and test mode have separate secrets; the mode whose secret verified is reported with the event. A mode
 * may be `undefined` (an unset environment variable): it then has no secret, and at least one mode must have one.
 */
export type Secrets = SecretList | ModeSecrets;
export interface ModeSecrets {
  live?: SecretList | undefined;
  test?: SecretList | undefined;
}

import type { Mode } from '../contract/context.js';

export type { Mode };
/**
 * How a secret string becomes key bytes: `text` uses its UTF-8 bytes; `whsec` (Standard Webhooks) decodes the
 * base64 after an optional `whsec_` prefix. Byte-array secrets are the key bytes in both.
 */
export type SecretFormat = 'text' | 'whsec';

export interface Key {
  readonly bytes: Uint8Array;
  readonly mode: Mode;
  /** `live[0]`, `test[1]`: names a secret in diagnostics without revealing it. */
  readonly label: string;
}

const encoder = new TextEncoder();

/**
 * Turns the secrets option into keys once, at configuration time, and rejects the usual mistakes
 * (unset variable, stray newline from a .env file) with a message that names them.
 * A plain secret or list counts as live; pass { test: … } for test-mode secrets.
 */
export function resolveKeys(secrets: Secrets | undefined, format: SecretFormat = 'text'): Key[] {
  if (secrets === undefined || secrets === null) {
    throw new WebhookConfigError(
      'No webhook secret was given. Pass secrets (for example process.env.WEBHOOK_SECRET) and check that the variable is set.',
    );
  }
  const keys: Key[] = [];
  if (isModeMap(secrets)) {
    for (const mode of ['live', 'test'] as const) {
      const list = secrets[mode];
      if (list !== undefined) addKeys(keys, list, mode, format);
    }
  } else {
    addKeys(keys, secrets, 'live', format);
  }
  if (keys.length === 0) {
    throw new WebhookConfigError(
      'The secrets option holds no secret. Give at least one live or test secret.',
    );
  }
  return keys;
}

function addKeys(keys: Key[], list: SecretList, mode: Mode, format: SecretFormat): void {
  const secrets: readonly Secret[] = Array.isArray(list) ? list : [list as Secret];
  secrets.forEach((secret, index) => {
    keys.push({ bytes: toKeyBytes(secret, `${mode}[${index}]`, format), mode, label: `${mode}[${index}]` });
  });
}

function toKeyBytes(secret: Secret, label: string, format: SecretFormat): Uint8Array {
  if (secret instanceof Uint8Array) {
    if (secret.byteLength === 0) throw new WebhookConfigError(`Secret ${label} is an empty byte array.`);
    return secret;
  }
  if (typeof secret !== 'string') {
    throw new WebhookConfigError(`Secret ${label} must be a string or a Uint8Array, got ${typeof secret}.`);
  }
  if (secret.length === 0) {
    throw new WebhookConfigError(
      `Secret ${label} is an empty string. Is the environment variable that holds it (for example WEBHOOK_SECRET) set?`,
    );
  }
  if (secret.trim() !== secret) {
    throw new WebhookConfigError(
      `Secret ${label} has leading or trailing whitespace, most often a newline copied from a .env file or echo. Trim it: the service signs with the secret alone.`,
    );
  }
  if (format === 'text') return encoder.encode(secret);
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (key === undefined || key.byteLength === 0) {
    throw new WebhookConfigError(
      `Secret ${label} is not a whsec_ secret: this signature profile takes 'whsec_' followed by standard base64, as the service shows it.`,
    );
  }
  return key;
}

/** Whether the secrets option separates live and test; a single secret or list says nothing about mode. */
export function isModeMap(secrets: Secrets): secrets is ModeSecrets {
  return (
    typeof secrets === 'object' &&
    !(secrets instanceof Uint8Array) &&
    !Array.isArray(secrets) &&
    secrets !== null
  );
}
