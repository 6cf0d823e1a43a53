import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodySignature,
  createProfile,
  type SignatureProfile,
  standardWebhooks,
  verifySignature,
} from '../../src/index.js';
import { type SignatureProfileConfig, signRequest } from '../../src/signature/index.js';

const NOW = 1_795_000_000;
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** Any profile the config allows: header or body, every syntax, hash, encoding, and a signed-content shape. */
const randomConfig: fc.Arbitrary<SignatureProfileConfig> = fc
  .record({
    inBody: fc.boolean(),
    syntax: fc.constantFrom('t-v1', 'v1-list', 'plain'),
    hash: fc.constantFrom('SHA-256', 'SHA-384', 'SHA-512'),
    encoding: fc.constantFrom('hex', 'base64'),
    withId: fc.boolean(),
    content: fc.constantFrom('raw-without-member', 'json-without-member'),
    literal: fc.stringMatching(/^[a-z.:|-]{0,4}$/),
    bodyFirst: fc.boolean(),
  })
  .map(({ inBody, syntax, hash, encoding, withId, content, literal, bodyFirst }) => {
    const slots = withId ? '{id}{timestamp}' : '{timestamp}';
    return {
      name: 'random',
      signature: inBody ? { bodyField: 'sig', syntax, content } : { header: 'X-Random-Signature', syntax },
      ...(syntax === 't-v1' ? {} : { timestamp: { header: 'x-random-timestamp' } }),
      ...(withId ? { id: { header: 'x-random-id' } } : {}),
      hash,
      encoding,
      signedContent: bodyFirst ? `{body}${literal}${slots}` : `${slots}${literal}{body}`,
    } as SignatureProfileConfig;
  });

const presets: Array<[string, SignatureProfile, string]> = [
  ['default', createProfile({ name: 'default', signature: { header: 'webhook-signature' } }), 'whsec_x'],
  ['standardWebhooks', standardWebhooks, WHSEC],
  ['bodySignature', bodySignature(), 'whsec_x'],
];
const eventBody = fc
  .record({ id: fc.string(), data: fc.jsonValue(), note: fc.string({ unit: 'binary' }) })
  .map((event) => JSON.stringify(event));

/** Signs `body` under `profile`, checks it verifies, and returns what was sent. */
function roundTrip(profile: SignatureProfile, secret: string, body: string) {
  const signed = signRequest({ payload: body, secret, profile, timestamp: NOW });
  const verified = verifySignature({
    payload: signed.body,
    headers: signed.headers,
    secrets: secret,
    profile,
    now: NOW,
  });
  expect(verified).toMatchObject({ ok: true, timestamp: NOW, secretLabel: 'live[0]' });
  return signed;
}

/**
 * The one change of one byte that leaves a body-signed request saying the same: a case change of a hex letter
 * of the signature (hex is read in either case). Both body contents sign the bytes as received, so a change
 * that parses to the same value (a 17th significant digit) is another body and rejects.
 */
function saysTheSame(
  config: SignatureProfileConfig,
  profile: SignatureProfile,
  sent: Uint8Array,
  changed: Uint8Array,
  index: number,
): boolean {
  if (!('bodyField' in config.signature)) return false;
  // The signer writes the member last, so its digest ends just before the closing `"}`.
  const digestChars = profile.encoding === 'hex' ? digestBytes[profile.hash] * 2 : 0;
  const inDigest = index >= sent.length - 2 - digestChars && index < sent.length - 2;
  const letter = /[a-f]/i.test(String.fromCharCode(sent[index] as number));
  return inDigest && letter && ((sent[index] as number) ^ (changed[index] as number)) === 0x20;
}

const digestBytes = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 } as const;

describe('profiles: parsing never throws, sign → verify, any change rejects', () => {
  const anyText = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json(), eventBody);
  it('reading any headers and any body never throws, under every preset and random profiles', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...presets.map(([, profile]) => profile)), randomConfig.map(createProfile)),
        fc.dictionary(
          fc.constantFrom(
            'webhook-signature',
            'webhook-id',
            'webhook-timestamp',
            'x-random-signature',
            'x-random-timestamp',
            'x-random-id',
          ),
          anyText,
        ),
        anyText,
        (profile, headers, body) => {
          const result = verifySignature({ payload: body, headers, secrets: WHSEC, profile, now: NOW });
          expect(typeof result.ok).toBe('boolean');
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each(presets)('%s: round-trips any event body', (_name, profile, secret) => {
    fc.assert(
      fc.property(eventBody, (body) => void roundTrip(profile, secret, body)),
      { numRuns: 100 },
    );
  });

  it('random profiles round-trip, and flipping any byte of what was sent rejects unless it says the same', () => {
    fc.assert(
      fc.property(
        randomConfig,
        eventBody,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (config, body, at, flip) => {
          const profile = createProfile(config);
          const signed = roundTrip(profile, 'whsec_x', body);
          const sent = new TextEncoder().encode(signed.body as string);
          const bytes = sent.slice();
          const index = at % bytes.length;
          bytes[index] = (bytes[index] as number) ^ flip;
          const result = verifySignature({
            payload: bytes,
            headers: signed.headers,
            secrets: 'whsec_x',
            profile,
            now: NOW,
          });
          expect(result.ok).toBe(saysTheSame(config, profile, sent, bytes, index));
        },
      ),
      { numRuns: 300 },
    );
  });

  // 'Z' is no hex digit, so it cannot be a case change of the same hex (which is the same signature).
  it('changing any character of a signature header rejects', () => {
    fc.assert(
      fc.property(
        randomConfig.filter((config) => 'header' in config.signature),
        eventBody,
        fc.nat(),
        (config, body, at) => {
          const profile = createProfile(config);
          const signed = roundTrip(profile, 'whsec_x', body);
          const value = signed.headers['x-random-signature'] as string;
          const index = at % value.length;
          const changed = value.slice(0, index) + (value[index] === 'Z' ? 'Y' : 'Z') + value.slice(index + 1);
          const headers = { ...signed.headers, 'x-random-signature': changed };
          const result = verifySignature({
            payload: signed.body,
            headers,
            secrets: 'whsec_x',
            profile,
            now: NOW,
          });
          expect(result.ok).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** The same value down to every leaf by Object.is (so -0 is not 0), keys in the same order. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const other = Object.keys(b);
  return (
    keys.length === other.length &&
    keys.every(
      (key, i) =>
        key === other[i] &&
        sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
    )
  );
}

const TOKEN = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null|true|false/g;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Changes an attacker can make to a captured body: bytes flipped, text spliced in, a token re-spelled. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bits: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    remove: fc.nat({ max: 4 }),
    insert: fc.constantFrom(
      ' ',
      '\n',
      ',',
      '-',
      '0',
      '.0',
      'e0',
      '1e999',
      '"',
      'null',
      ',v1=',
      'x',
      '\\u0041',
    ),
  }),
  fc.record({
    kind: fc.constant('respell' as const),
    at: fc.nat(),
    spelling: fc.constantFrom('-0', '0.0', '1e999', '-1e999', '1E999', '0e0', '00', '1.0', '1e0'),
  }),
);

function mutate(sent: string, change: MutationOf): Uint8Array {
  if (change.kind === 'flip') {
    const bytes = encoder.encode(sent);
    const index = change.at % bytes.length;
    bytes[index] = (bytes[index] as number) ^ change.bits;
    return bytes;
  }
  if (change.kind === 'splice') {
    const at = change.at % (sent.length + 1);
    return encoder.encode(sent.slice(0, at) + change.insert + sent.slice(at + change.remove));
  }
  const tokens = [...sent.matchAll(TOKEN)];
  const token = tokens[change.at % Math.max(1, tokens.length)];
  if (!token) return encoder.encode(sent);
  const at = token.index;
  return encoder.encode(sent.slice(0, at) + change.spelling + sent.slice(at + token[0].length));
}
type MutationOf = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

describe('body signatures verify only what was signed', () => {
  const event = fc.record({
    type: fc.constant('message.delivered'),
    reason: fc.constant(null),
    count: fc.constantFrom(0, 1, 12.5),
    data: fc.jsonValue(),
  });
  it.each([
    ['raw-without-member', bodySignature()],
    ['json-without-member', bodySignature({ content: 'json-without-member' })],
  ])(
    '%s: whenever a changed body verifies, it parses to the signed event, every leaf the same',
    (_name, profile) => {
      fc.assert(
        fc.property(event, fc.boolean(), mutation, (value, pretty, change) => {
          const payload = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
          const sent = signRequest({ payload, secret: 'whsec_x', profile, timestamp: NOW }).body as string;
          const changed = mutate(sent, change);
          const result = verifySignature({ payload: changed, secrets: 'whsec_x', profile, now: NOW });
          if (!result.ok) return;
          const parsed = JSON.parse(decoder.decode(changed)) as Record<string, unknown>;
          delete parsed.signature;
          expect(sameValue(parsed, JSON.parse(payload))).toBe(true);
        }),
        { numRuns: 1000 },
      );
    },
  );
});
