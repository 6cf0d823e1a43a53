import { describe, expect, it } from 'vitest';
import {
  bodySignature,
  createProfile,
  createReceiver,
  type SignatureProfile,
  standardWebhooks,
} from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { delivery, expectRejected, SECRET } from '../support/unit.js';

const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const acme = createProfile({
  name: 'acme',
  signature: { header: 'X-Acme-Signature', syntax: 'plain' },
  timestamp: { header: 'X-Acme-Timestamp' },
  encoding: 'base64',
});

/** What the receiver answers for a request, under a profile: its reason code and message. */
async function answer(profile: SignatureProfile | undefined, headers: Record<string, string>, body: string) {
  const receiver = createReceiver({ secrets: profile === standardWebhooks ? WHSEC : SECRET, profile });
  const outcome = await receiver.receive({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    rawBody: new TextEncoder().encode(body),
  });
  return outcome;
}

const message = (outcome: Awaited<ReturnType<typeof answer>>, status: number, code: string) =>
  expectRejected(outcome, status, code).message;

describe('each profile describes its own format in its messages', () => {
  const body = JSON.stringify(createEvent('message.delivered'));

  it('default: the webhook-signature header, t=…,v1=<hex>, and the signatureHeader option', async () => {
    const missing = message(await answer(undefined, {}, body), 401, 'missing_signature');
    expect(missing).toContain('The webhook-signature header is missing');
    expect(missing).toContain('t=<unix seconds>,v1=<hex>');
    expect(missing).toContain('signatureHeader option');
    const malformed = message(
      await answer(undefined, { 'webhook-signature': 'v1=abc' }, body),
      401,
      'malformed_signature',
    );
    expect(malformed).toContain('not of the form t=<unix seconds>,v1=<hex>');
    expect(malformed).toContain('exactly one t');
  });

  it('standardWebhooks: its three headers and v1,<base64>; never t=, v1=<hex> or signatureHeader', async () => {
    const missing = message(await answer(standardWebhooks, {}, body), 401, 'missing_signature');
    expect(missing).toContain('The webhook-signature header is missing');
    expect(missing).toContain('v1,<base64>');
    expect(missing).toContain('webhook-timestamp: <unix seconds>');
    expect(missing).toContain('webhook-id');
    expect(missing).toContain('createProfile');
    const timestamp = message(
      await answer(standardWebhooks, { 'webhook-signature': 'v1,abc', 'webhook-id': 'msg_1' }, body),
      401,
      'malformed_signature',
    );
    expect(timestamp).toContain('The webhook-timestamp header is missing or not a timestamp');
    const id = message(
      await answer(standardWebhooks, { 'webhook-signature': 'v1,abc', 'webhook-timestamp': '12' }, body),
      401,
      'malformed_signature',
    );
    expect(id).toContain('The webhook-id header');
    const stale = message(
      await answer(
        standardWebhooks,
        { 'webhook-signature': 'v1,abc', 'webhook-timestamp': '12', 'webhook-id': 'msg_1' },
        body,
      ),
      401,
      'stale_timestamp',
    );
    expect(stale).toContain('(the webhook-timestamp header)');
    for (const text of [missing, timestamp, id, stale]) {
      expect(text).not.toMatch(/t=<|v1=<|<hex>|signatureHeader/);
    }
  });

  it('a body signature: the body member, its syntax, bodySignature({ field }); no header', async () => {
    const missing = message(await answer(bodySignature(), {}, body), 401, 'missing_signature');
    expect(missing).toContain('The body\'s top-level "signature" member is missing');
    expect(missing).toContain('"signature":"t=<unix seconds>,v1=<hex>"');
    expect(missing).toContain('bodySignature({ field })');
    expect(missing).not.toMatch(/header/);
    const signed = createSignedRequest(createEvent('message.delivered'), {
      secret: 'whsec_other',
      profile: bodySignature(),
    });
    const mismatch = message(await answer(bodySignature(), {}, signed.body), 401, 'signature_mismatch');
    expect(mismatch).toContain('the body without its "signature" member, cut from the bytes as received');
  });

  it('a createProfile profile: its own header, plain base64, its timestamp header, its config paths', async () => {
    const missing = message(await answer(acme, {}, body), 401, 'missing_signature');
    expect(missing).toContain('The x-acme-signature header is missing');
    expect(missing).toContain('x-acme-signature: <base64>, x-acme-timestamp: <unix seconds>');
    expect(missing).toContain("set signature.header of createProfile({ name: 'acme' })");
    const timestamp = message(
      await answer(acme, { 'x-acme-signature': 'abc', 'x-acme-timestamp': 'soon' }, body),
      401,
      'malformed_signature',
    );
    expect(timestamp).toContain('The x-acme-timestamp header is missing or not a timestamp');
    expect(timestamp).toContain("set timestamp of createProfile({ name: 'acme' })");
    expect(acme.explain('signature_mismatch')).toContain('"<timestamp>.<body>" (<body>: the raw body bytes)');
  });
});

describe('a body signature that cannot be read is refused with what is wrong, never guessed', () => {
  const cases: Array<[string, string, string, string]> = [
    [
      'two top-level members',
      '{"signature":"t=1,v1=ab","id":"evt_1","signature":"t=1,v1=cd"}',
      'malformed_signature',
      'more than one top-level "signature" member',
    ],
    [
      'a member nested elsewhere only',
      '{"id":"evt_1","data":{"signature":"t=1,v1=ab"}}',
      'missing_signature',
      'only one nested inside another value',
    ],
    [
      'a top level that is not an object',
      '["signature","t=1,v1=ab"]',
      'malformed_signature',
      'not a JSON object',
    ],
    [
      'a member that is not a string',
      '{"signature":["t=1,v1=ab"]}',
      'malformed_signature',
      'not a JSON string',
    ],
  ];
  it.each(cases)('%s', async (_name, body, code, says) => {
    expect(message(await answer(bodySignature(), {}, body), 401, code)).toContain(says);
  });
});

describe('a timestamp out of tolerance', () => {
  const NOW = 1_764_337_000;
  const event = createEvent('message.delivered');
  const receiver = createReceiver({
    secrets: SECRET,
    now: () => NOW * 1000,
    toleranceSeconds: { past: 300, future: 60 },
  });
  const rejected = async (timestamp: number, code: string) =>
    expectRejected(await receiver.receive(delivery(event, { timestamp })), 401, code).message;

  it('says how old a stale one is and what the tolerance is', async () => {
    expect(await rejected(NOW - 3600, 'stale_timestamp')).toContain(
      'The signature timestamp (the t= of the webhook-signature header) is 3600 s (1 h) old; the tolerance is 300 s (5 min).',
    );
    expect(await rejected(NOW - 301, 'stale_timestamp')).toContain('is 301 s (about 5 min) old');
  });

  it('says how far ahead a future one is, its own tolerance, and when it looks like milliseconds', async () => {
    const ahead = await rejected(NOW + 90, 'future_timestamp');
    expect(ahead).toContain('is 90 s in the future; the tolerance is 60 s. Check the clock');
    expect(ahead).not.toContain('milliseconds');
    expect(await rejected(NOW * 1000, 'future_timestamp')).toContain(
      'years) in the future; the tolerance is 60 s. It looks like milliseconds: sign with unix seconds',
    );
  });
});
