import type { SignatureFailureReason } from '../contract/reasons.js';
import type { ResolvedConfig, Slot } from './profile-config.js';
import { type SignatureProblem, syntaxes } from './reading.js';

/** How far a timestamp out of tolerance is from the receiver's clock, and the tolerance on that side (seconds). */
export interface TimestampOffset {
  /** The timestamp as signed (unix seconds). */
  readonly timestamp: number;
  /** Seconds the timestamp is off: how old a stale one is, how far ahead a future one is. */
  readonly offsetSeconds: number;
  /** The tolerance on the side the timestamp is out of: `toleranceSeconds.past` or `.future`. */
  readonly toleranceSeconds: number;
}

/** What a user does to change where one part of the format travels, as a message says it ("set …"). */
export type OptionNames = (part: 'signature' | 'timestamp' | 'id') => string;

/** How a profile describes itself: its format in one line, and what to do about each failure. */
export interface ProfileText {
  /** For example `webhook-signature: t=<unix seconds>,v1=<hex>`. */
  readonly format: string;
  message(reason: SignatureFailureReason, problem?: SignatureProblem, offset?: TimestampOffset): string;
}

/** A profile made by createProfile is changed by its config paths. */
export const createProfileOptions =
  (config: ResolvedConfig): OptionNames =>
  (part) => {
    const signature = 'bodyField' in config.signature ? 'signature.bodyField' : 'signature.header';
    const path = { signature, timestamp: 'timestamp', id: 'id.header' }[part];
    return `set ${path} of createProfile({ name: '${config.name}' })`;
  };

/**
 * Every message a profile gives, derived from its config alone: a new format describes itself here, by its
 * config, with no message written for it. Names and syntax only: never a secret, a signature or the body.
 */
export function describeProfile(config: ResolvedConfig, options: OptionNames): ProfileText {
  const { signature, timestamp, id, encoding } = config;
  const inBody = 'bodyField' in signature;
  const field = inBody ? signature.bodyField : '';
  const digest = `<${encoding}>`;
  const syntax = syntaxes[signature.syntax];
  const value = syntax.shape(digest);
  const carrier = inBody
    ? `the body's top-level "${signature.bodyField}" member`
    : `the ${signature.header} header`;
  const Carrier = carrier[0]?.toUpperCase() + carrier.slice(1);
  const timestampPlace =
    timestamp === 'signature'
      ? `the t= of ${carrier}`
      : 'header' in timestamp
        ? `the ${timestamp.header} header`
        : `the body's "${timestamp.bodyField}" member`;
  const parts = [
    inBody ? `a JSON object body with "${signature.bodyField}":"${value}"` : `${signature.header}: ${value}`,
  ];
  if (typeof timestamp === 'object')
    parts.push(
      'header' in timestamp
        ? `${timestamp.header}: <unix seconds>`
        : `"${timestamp.bodyField}": <ISO 8601 or unix seconds>`,
    );
  if (id) parts.push(`${id.header}: <message id>`);
  const format = parts.join(', ');
  const signed = `"${config.template.before.map(slotText).join('')}<body>${config.template.after.map(slotText).join('')}" (<body>: ${
    inBody
      ? `the body without its "${signature.bodyField}" member, cut from the bytes as received`
      : 'the raw body bytes'
  })`;
  const tolerance = (side: string, offset: TimestampOffset | undefined, how: string) =>
    offset === undefined
      ? `The signature timestamp (${timestampPlace}) is ${side} than the tolerance.`
      : `The signature timestamp (${timestampPlace}) is ${seconds(offset.offsetSeconds)} ${how}; the tolerance is ${seconds(offset.toleranceSeconds)}.`;
  const problems: Record<SignatureProblem, string> = {
    body_not_json: `The body is not JSON text, so it cannot carry a top-level "${field}" member. Expected ${format}.`,
    body_not_object: `The body is not a JSON object, so it cannot carry a top-level "${field}" member. Expected ${format}.`,
    member_repeated: `The body has more than one top-level "${field}" member: which one was signed cannot be told, so none is used. Send it once.`,
    member_not_string: `${Carrier} is not a JSON string: expected "${value}".`,
    member_nested: `The body has no top-level "${field}" member, only one nested inside another value: the signature is read from the top level only. Expected ${format}.`,
    signature_syntax: `${Carrier} is not of the form ${value}: ${syntax.rule}.`,
    timestamp_invalid: `${timestampPlace[0]?.toUpperCase() + timestampPlace.slice(1)} is missing or not a timestamp (${
      typeof timestamp === 'object' && 'bodyField' in timestamp
        ? 'ISO 8601 with an offset, or unix seconds'
        : 'unix seconds, digits only'
    }). Send it as the service signed it, or ${options('timestamp')} if the service puts it elsewhere.`,
    id_missing: `The ${id?.header} header (the message id, which is signed) is missing or empty. Send it as the service signed it, or ${options('id')} if the service uses another name.`,
  };
  const messages = (offset: TimestampOffset | undefined): Record<SignatureFailureReason, string> => ({
    missing_signature: `${Carrier} is missing or empty; expected ${format}. Send the ${inBody ? 'body' : 'header'} the service signed, or ${options('signature')} if the service uses another name.`,
    malformed_signature: `The signature cannot be read: expected ${format}; ${syntax.rule}.`,
    stale_timestamp: `${tolerance('older', offset, 'old')} Replays are dropped; if this is a live delivery, check the clock of this server (NTP) or raise toleranceSeconds.`,
    future_timestamp: `${tolerance('further in the future', offset, 'in the future')} ${
      offset && looksLikeMilliseconds(offset.timestamp)
        ? 'It looks like milliseconds: sign with unix seconds (Math.floor(Date.now() / 1000)).'
        : 'Check the clock of this server (NTP) or raise toleranceSeconds.'
    }`,
    signature_mismatch: `No signature in ${carrier} matches ${signed} with any configured secret. Check that the secret is the one of this endpoint and mode, and that the body reaches the receiver as raw bytes, not re-serialized JSON.`,
  });
  return {
    format,
    message: (reason, problem, offset) =>
      problem !== undefined && (reason === 'missing_signature' || reason === 'malformed_signature')
        ? problems[problem]
        : messages(offset)[reason],
  };
}

function slotText(part: string | Slot): string {
  return typeof part === 'string' ? part : `<${part.slot}>`;
}

/** Seconds, and from two minutes on the same in the unit a reader takes in at once: `5400 s (1.5 h)`. */
export function seconds(value: number): string {
  const exact = `${value} s`;
  const unit = value >= 120 && UNITS.find(([size]) => value >= size);
  if (!unit) return exact;
  const [size, name] = unit;
  const amount = value >= size * 10 ? Math.round(value / size) : Math.round((value / size) * 10) / 10;
  return `${exact} (${amount * size === value ? '' : 'about '}${amount} ${name})`;
}

const UNITS: readonly (readonly [number, string])[] = [
  [86_400 * 365, 'years'],
  [86_400, 'days'],
  [3600, 'h'],
  [60, 'min'],
];

/** A unix time in milliseconds reads, taken as seconds, as a time tens of thousands of years ahead. */
export const looksLikeMilliseconds = (timestamp: number): boolean => timestamp >= 1e11;
