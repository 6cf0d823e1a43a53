import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  createProfile,
  createReceiver,
  createVerifier,
  defaultProfile,
  standardWebhooks,
  verifySignature,
  WebhookConfigError,
} from '../../src/index.js';
import {
  resolveProfile,
  type SignatureProfileConfig,
  signPayload,
  signRequest,
} from '../../src/signature/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { expectAccepted, expectRejected, SECRET } from '../support/unit.js';

const published = JSON.parse(
  readFileSync(new URL('../fixtures/standard-webhooks.json', import.meta.url), 'utf8'),
) as {
  sign: { secret: string; id: string; timestamp: number; payload: string; signature: string };
  verify: Array<{ name: string; signature: string; valid: boolean; reason?: string }>;
};
const vector = published.sign;
const headersOf = (signature: string) => ({
  'webhook-id': vector.id,
  'webhook-timestamp': String(vector.timestamp),
  'webhook-signature': signature,
});

describe('standardWebhooks preset', () => {
  it('signs the published vector exactly', () => {
    const signed = signRequest({
      payload: vector.payload,
      secret: vector.secret,
      id: vector.id,
      timestamp: vector.timestamp,
      profile: standardWebhooks,
    });
    expect(signed).toEqual({ headers: headersOf(vector.signature), body: vector.payload });
  });

  for (const c of published.verify) {
    it(`published case: ${c.name}`, () => {
      const result = verifySignature({
        payload: vector.payload,
        headers: headersOf(c.signature),
        secrets: vector.secret,
        profile: standardWebhooks,
        now: vector.timestamp,
      });
      expect(result).toEqual(
        c.valid
          ? {
              ok: true,
              timestamp: vector.timestamp,
              mode: 'live',
              secretLabel: 'live[0]',
              messageId: vector.id,
            }
          : { ok: false, reason: c.reason, timestamp: vector.timestamp },
      );
    });
  }

  it('takes the secret with or without whsec_, as the reference library does', () => {
    const unprefixed = vector.secret.slice('whsec_'.length);
    const options = {
      payload: vector.payload,
      headers: headersOf(vector.signature),
      profile: standardWebhooks,
    };
    expect(verifySignature({ ...options, secrets: unprefixed, now: vector.timestamp }).ok).toBe(true);
    expect(() => verifySignature({ ...options, secrets: 'whsec_not base64!' })).toThrow(
      /whsec_' followed by standard base64/,
    );
  });

  it('a missing header: signature → missing_signature; id or timestamp → malformed_signature', () => {
    const check = (headers: Record<string, string>) =>
      verifySignature({
        payload: vector.payload,
        headers,
        secrets: vector.secret,
        profile: standardWebhooks,
      });
    const { 'webhook-signature': _s, ...noSignature } = headersOf(vector.signature);
    const { 'webhook-id': _i, ...noId } = headersOf(vector.signature);
    const { 'webhook-timestamp': _t, ...noTimestamp } = headersOf(vector.signature);
    expect(check(noSignature)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(check(noId)).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(check(noTimestamp)).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(check({ ...headersOf(vector.signature), 'webhook-timestamp': '16142x' })).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    expect(check(headersOf('v2,abc'))).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('interop: the standardwebhooks package’s signature passes our verify', () => {
    const wh = new Webhook(vector.secret);
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify(createEvent('message.delivered'));
    const signature = wh.sign('msg_interop_1', new Date(now * 1000), body);
    const result = verifySignature({
      payload: Buffer.from(body),
      headers: {
        'webhook-id': 'msg_interop_1',
        'webhook-timestamp': String(now),
        'webhook-signature': signature,
      },
      secrets: vector.secret,
      profile: standardWebhooks,
    });
    expect(result).toMatchObject({ ok: true, messageId: 'msg_interop_1', timestamp: now });
  });

  it('interop: our signature passes the standardwebhooks package’s verify', () => {
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: vector.secret, profile: standardWebhooks });
    expect(Object.keys(signed.headers).sort()).toEqual([
      'content-type',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    expect(new Webhook(vector.secret).verify(signed.body, signed.headers)).toEqual(event);
  });

  it('a receiver with the profile processes its deliveries; the default format is malformed to it', async () => {
    const receiver = createReceiver({ secrets: vector.secret, profile: standardWebhooks });
    const seen: unknown[] = [];
    const messageIds: unknown[] = [];
    receiver.on('message.delivered', (event, ctx) => {
      seen.push(event.id);
      messageIds.push(ctx.messageId);
    });
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: vector.secret, profile: standardWebhooks });
    expectAccepted(
      await receiver.receive({ method: 'POST', headers: signed.headers, rawBody: signed.body }),
      200,
    );
    // The handler is told the delivery's webhook-id.
    expect(messageIds).toEqual([signed.headers['webhook-id']]);
    const other = createSignedRequest(createEvent('message.delivered'), { secret: vector.secret });
    expectRejected(
      await receiver.receive({ method: 'POST', headers: other.headers, rawBody: other.body }),
      401,
      'malformed_signature',
    );
    expect(seen).toEqual([event.id]);
  });
});

describe('profiles by configuration', () => {
  const custom = createProfile({
    name: 'acme',
    signature: { header: 'X-Acme-Signature', syntax: 'plain' },
    timestamp: { header: 'X-Acme-Timestamp' },
    hash: 'SHA-512',
    encoding: 'base64',
    signedContent: 'acme:{timestamp}:{body}:end',
  });

  it('another header, SHA-512, base64 and another signed content: sign → verify, with the HMAC checked by hand', async () => {
    const { createHmac } = await import('node:crypto');
    const signed = signRequest({
      payload: '{"a":1}',
      secret: SECRET,
      timestamp: 1_800_000_000,
      profile: custom,
    });
    const expected = createHmac('sha512', SECRET).update('acme:1800000000:{"a":1}:end').digest('base64');
    expect(signed.headers).toEqual({ 'x-acme-timestamp': '1800000000', 'x-acme-signature': expected });
    const result = verifySignature({
      payload: '{"a":1}',
      headers: signed.headers,
      secrets: SECRET,
      profile: custom,
      now: 1_800_000_000,
    });
    expect(result).toEqual({ ok: true, timestamp: 1_800_000_000, mode: 'live', secretLabel: 'live[0]' });
    expect(custom.headers).toEqual(['x-acme-signature', 'x-acme-timestamp']);
  });

  it('literal text that reads like a placeholder name ("id", "timestamp") is signed as text', async () => {
    const { createHmac } = await import('node:crypto');
    const literal = createProfile({
      name: 'literal',
      signature: { header: 'X-Literal-Signature', syntax: 'plain' },
      timestamp: { header: 'X-Literal-Timestamp' },
      id: { header: 'X-Literal-Id' },
      signedContent: '{id}id{timestamp}timestamp{body}',
    });
    const signed = signRequest({
      payload: '{"a":1}',
      secret: SECRET,
      timestamp: 1_800_000_000,
      id: 'msg_1',
      profile: literal,
    });
    const expected = createHmac('sha256', SECRET).update('msg_1id1800000000timestamp{"a":1}').digest('hex');
    expect(signed.headers['x-literal-signature']).toBe(expected);
  });

  it('the signatureHeader option renames the default profile’s header', () => {
    expect(resolveProfile({})).toBe(defaultProfile);
    const renamed = resolveProfile({ signatureHeader: 'X-Messaging-Signature' });
    expect(renamed.signatureHeader).toBe('x-messaging-signature');
    const header = signPayload({ payload: '{}', secret: SECRET, timestamp: 5 });
    const verifier = createVerifier({ secrets: SECRET, signatureHeader: 'X-Messaging-Signature' });
    expect(verifier.verify({ headers: { 'X-Messaging-Signature': header }, body: '{}' }, 5)).toMatchObject({
      ok: true,
    });
    expect(() => resolveProfile({ profile: standardWebhooks, signatureHeader: 'x' })).toThrow(
      WebhookConfigError,
    );
    expect(() => createVerifier({ secrets: SECRET, crypto: {} as never })).toThrow(
      /crypto must be a CryptoProvider/,
    );
  });

  const mistakes: Array<[string, unknown, RegExp]> = [
    ['no name', { signature: { header: 'x' } }, /give it a name/],
    ['no location', { name: 'p' }, /signature must be \{ header/],
    ['both locations', { name: 'p', signature: { header: 'x', bodyField: 'y' } }, /signature must be/],
    ['bad header name', { name: 'p', signature: { header: 'x y' } }, /HTTP header name/],
    [
      'unknown syntax',
      { name: 'p', signature: { header: 'x', syntax: 'csv' } },
      /'t-v1', 'v1-list', 'plain'/,
    ],
    [
      'v1-list without a timestamp',
      { name: 'p', signature: { header: 'x', syntax: 'v1-list' } },
      /only a 't-v1'/,
    ],
    ['unknown hash', { name: 'p', signature: { header: 'x' }, hash: 'MD5' }, /hash must be one of/],
    ['unknown encoding', { name: 'p', signature: { header: 'x' }, encoding: 'base32' }, /encoding must be/],
    ['unknown secret format', { name: 'p', signature: { header: 'x' }, secretFormat: 'pem' }, /secretFormat/],
    [
      'no {body}',
      { name: 'p', signature: { header: 'x' }, signedContent: '{timestamp}' },
      /\{body\} exactly once/,
    ],
    ['two {body}', { name: 'p', signature: { header: 'x' }, signedContent: '{body}{body}' }, /exactly once/],
    [
      '{id} without an id',
      { name: 'p', signature: { header: 'x' }, signedContent: '{id}.{body}' },
      /set id to/,
    ],
    [
      'unknown placeholder',
      { name: 'p', signature: { header: 'x' }, signedContent: '{ts}.{body}' },
      /unknown placeholder \{ts\}/,
    ],
    [
      'empty body field',
      { name: 'p', signature: { bodyField: '' }, timestamp: { header: 't' } },
      /top-level body field/,
    ],
    [
      'bad timestamp source',
      { name: 'p', signature: { header: 'x' }, timestamp: 'clock' },
      /timestamp must be/,
    ],
  ];
  it.each(mistakes)('a mistake fails at creation with what to fix: %s', (_name, config, message) => {
    expect(() => createProfile(config as SignatureProfileConfig)).toThrow(WebhookConfigError);
    expect(() => createProfile(config as SignatureProfileConfig)).toThrow(message);
  });
});

describe('one-shot verifier cache', () => {
  it('a list of secrets mutated between calls is never served stale', () => {
    const payload = '{}';
    const header = signPayload({ payload, secret: 'whsec_second', timestamp: 10 });
    const secrets = ['whsec_first', 'whsec_second'];
    expect(verifySignature({ payload, header, secrets, now: 10 })).toMatchObject({
      ok: true,
      secretLabel: 'live[1]',
    });
    secrets[1] = 'whsec_other';
    expect(verifySignature({ payload, header, secrets, now: 10 })).toMatchObject({
      reason: 'signature_mismatch',
    });
    secrets.unshift('whsec_second');
    expect(verifySignature({ payload, header, secrets, now: 10 })).toMatchObject({
      ok: true,
      secretLabel: 'live[0]',
    });
    const bytes = new TextEncoder().encode('whsec_second');
    expect(verifySignature({ payload, header, secrets: [bytes], now: 10 }).ok).toBe(true);
    bytes[0] = 0;
    expect(verifySignature({ payload, header, secrets: [bytes], now: 10 }).ok).toBe(false);
    const modes = { live: ['whsec_first'], test: ['whsec_second'] };
    expect(verifySignature({ payload, header, secrets: modes, now: 10 })).toMatchObject({ mode: 'test' });
    modes.test = ['whsec_first'];
    expect(verifySignature({ payload, header, secrets: modes, now: 10 }).ok).toBe(false);
    const tolerance = { past: 100 };
    expect(
      verifySignature({ payload, header, secrets: 'whsec_second', toleranceSeconds: tolerance, now: 60 }).ok,
    ).toBe(true);
    tolerance.past = 10;
    expect(
      verifySignature({ payload, header, secrets: 'whsec_second', toleranceSeconds: tolerance, now: 60 }),
    ).toMatchObject({ reason: 'stale_timestamp' });
  });
});
