import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bodySignature, createReceiver, verifySignature } from '../../src/index.js';
import { signRequest } from '../../src/signature/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { expectAccepted, SECRET } from '../support/unit.js';

const NOW = 1_795_000_000;
const CREATED = '2026-11-18T11:06:40+00:00'; // NOW as ISO 8601
const profile = bodySignature();
const hmac = (content: string) => createHmac('sha256', SECRET).update(content).digest('hex');

/** A body carrying `t=NOW,v1=<HMAC of "NOW." + signed>` at the place the test wrote `SIG`. */
function carrying(template: string, signed: string): string {
  return template.replace('SIG', `t=${NOW},v1=${hmac(`${NOW}.${signed}`)}`);
}
const verify = (body: string, now = NOW) => verifySignature({ payload: body, secrets: SECRET, profile, now });

describe('bodySignature: the signed content is the raw body without the member', () => {
  const cases: Array<[string, string, string]> = [
    [
      'member first',
      `{"signature":"SIG","id":"evt_1","created_at":"${CREATED}"}`,
      `{"id":"evt_1","created_at":"${CREATED}"}`,
    ],
    [
      'member in the middle',
      `{"id":"evt_1","signature":"SIG","created_at":"${CREATED}"}`,
      `{"id":"evt_1","created_at":"${CREATED}"}`,
    ],
    [
      'member last',
      `{"id":"evt_1","created_at":"${CREATED}","signature":"SIG"}`,
      `{"id":"evt_1","created_at":"${CREATED}"}`,
    ],
    [
      'whitespace kept outside the removed span',
      `{\n  "id": "evt_1",\n  "signature" : "SIG" ,\n  "created_at": "${CREATED}"\n}`,
      `{\n  "id": "evt_1",\n  "created_at": "${CREATED}"\n}`,
    ],
    [
      'last member with whitespace: from the end of the previous value',
      `{ "created_at": "${CREATED}" ,\n "signature": "SIG" }`,
      `{ "created_at": "${CREATED}" }`,
    ],
    [
      'nested signature keys are not touched',
      `{"data":{"signature":"inner","list":[{"signature":1}]},"signature":"SIG","created_at":"${CREATED}"}`,
      `{"data":{"signature":"inner","list":[{"signature":1}]},"created_at":"${CREATED}"}`,
    ],
    [
      'escaped strings and an escaped key name',
      `{"note":"a \\"signature\\": \\\\ }{,","sig\\u006eature":"SIG","created_at":"${CREATED}"}`,
      `{"note":"a \\"signature\\": \\\\ }{,","created_at":"${CREATED}"}`,
    ],
  ];
  it.each(cases)('%s', (_name, template, signed) => {
    expect(JSON.parse(signed)).toBeTypeOf('object');
    expect(verify(carrying(template, signed))).toEqual({
      ok: true,
      timestamp: NOW,
      mode: 'live',
      secretLabel: 'live[0]',
    });
    // The same signature over anything else (here: the whole body with the member) does not match.
    expect(verify(carrying(template, template))).toMatchObject({ ok: false, reason: 'signature_mismatch' });
  });

  it('the member alone', () => {
    expect(verify(carrying('{ "signature":"SIG" }', '{  }'))).toMatchObject({ ok: true, timestamp: NOW });
  });

  it('by configuration: a plain hex member, SHA-512, the timestamp from created_at, the body alone signed', () => {
    const plain = bodySignature({
      syntax: 'plain',
      hash: 'SHA-512',
      timestamp: { bodyField: 'created_at' },
      signedContent: '{body}',
    });
    const event = `{"id":"evt_1","created_at":"${CREATED}"}`;
    const sig = createHmac('sha512', SECRET).update(event).digest('hex');
    const body = `{"id":"evt_1","signature":"${sig}","created_at":"${CREATED}"}`;
    expect(verifySignature({ payload: body, secrets: SECRET, profile: plain, now: NOW })).toMatchObject({
      ok: true,
      timestamp: NOW,
    });
    const check = (text: string) =>
      verifySignature({ payload: text, secrets: SECRET, profile: plain, now: NOW });
    expect(check(`{"signature":"${sig}"}`)).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(check(`{"signature":"${sig}","created_at":"2026-11-18T11:06:40"}`)).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    expect(check(`{"signature":"${sig}","created_at":${NOW}}`)).toMatchObject({
      reason: 'signature_mismatch',
      timestamp: NOW,
    });
    expect(check(`{"signature":"${sig}","created_at":"${CREATED}"}`)).toMatchObject({
      reason: 'signature_mismatch',
    });
  });

  const refused: Array<[string, string, string]> = [
    ['no member', `{"created_at":"${CREATED}"}`, 'missing_signature'],
    [
      'a duplicate member',
      `{"signature":"SIG","signature":"SIG","created_at":"${CREATED}"}`,
      'malformed_signature',
    ],
    ['a member that is not a string', `{"signature":12,"created_at":"${CREATED}"}`, 'malformed_signature'],
    ['a body that is not an object', `["signature","SIG"]`, 'malformed_signature'],
    ['a body that is not JSON', `{"signature":"SIG",`, 'malformed_signature'],
    ['a member that is not t=…,v1=…', `{"signature":"abc"}`, 'malformed_signature'],
  ];
  it.each(refused)('refuses %s', (_name, template, reason) => {
    expect(verify(carrying(template, '{}'))).toEqual({ ok: false, reason });
  });

  it('checks the member’s timestamp against the tolerance', () => {
    const body = carrying(`{"created_at":"${CREATED}","signature":"SIG"}`, `{"created_at":"${CREATED}"}`);
    const out = { ok: false, timestamp: NOW, toleranceSeconds: 300 };
    expect(verify(body, NOW + 301)).toEqual({ ...out, reason: 'stale_timestamp' });
    expect(verify(body, NOW - 301)).toEqual({ ...out, reason: 'future_timestamp' });
  });

  it('the signer adds the member last, so removing it gives back the bytes it signed', () => {
    const event = createEvent('message.delivered');
    const pretty = `${JSON.stringify(event, null, 2)}\n`;
    const signed = signRequest({ payload: pretty, secret: SECRET, profile, timestamp: NOW });
    const value = `t=${NOW},v1=${hmac(`${NOW}.${pretty}`)}`;
    expect(signed.headers).toEqual({});
    expect(signed.body).toBe(pretty.replace(/\n}\n$/, `,"signature":"${value}"\n}\n`));
    expect(JSON.parse(signed.body as string)).toEqual({ ...event, signature: value });
    expect(verify(signed.body as string)).toMatchObject({ ok: true });
    expect(() => signRequest({ payload: signed.body, secret: SECRET, profile })).toThrow(
      /without a top-level "signature"/,
    );
    const fromCreatedAt = bodySignature({ syntax: 'plain', timestamp: { bodyField: 'created_at' } });
    expect(() =>
      signRequest({ payload: pretty, secret: SECRET, profile: fromCreatedAt, timestamp: 1 }),
    ).toThrow(/created_at/);
  });
});

describe('bodySignature with content: json-without-member', () => {
  const canonical = bodySignature({ content: 'json-without-member', field: 'sig' });
  const check = (payload: string) =>
    verifySignature({ payload, secrets: SECRET, profile: canonical, now: NOW });

  it('is the same byte cut: JSON.stringify of the event with the member anywhere verifies, nothing is re-serialized', () => {
    const event = { id: 'evt_1', created_at: CREATED, reason: null, count: 0 };
    const signedText = JSON.stringify(event);
    const sig = `t=${NOW},v1=${hmac(`${NOW}.${signedText}`)}`;
    expect(check(JSON.stringify({ sig, ...event }))).toMatchObject({ ok: true });
    expect(check(JSON.stringify({ ...event, sig }))).toMatchObject({ ok: true });
    const sent = JSON.stringify({ ...event, sig });
    // Each parses to what JSON.stringify would write back as the signed text; none is what was signed.
    for (const changed of [
      sent.replace('"reason":null', '"reason":1e999'),
      sent.replace('"count":0', '"count":-0'),
      sent.replace('"count":0', '"count":0.0'),
      sent.replace('"evt_1"', '"evt\\u005f1"'),
      sent.replace('{"id"', '{ "id"'),
    ]) {
      expect(check(changed)).toEqual({ ok: false, reason: 'signature_mismatch', timestamp: NOW });
    }
    const signed = signRequest({ payload: signedText, secret: SECRET, profile: canonical, timestamp: NOW });
    expect(signed.body).toBe(JSON.stringify({ ...event, sig }));
  });
});

describe('bodySignature through a receiver', () => {
  it('the testing kit signs events the receiver accepts', async () => {
    const receiver = createReceiver({ secrets: SECRET, profile });
    const ids: string[] = [];
    receiver.on('message.delivered', (event) => {
      ids.push(event.id as string);
    });
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET, profile });
    expect(Object.keys(signed.headers)).toEqual(['content-type']);
    expectAccepted(
      await receiver.receive({ method: 'POST', headers: signed.headers, rawBody: signed.body }),
      200,
    );
    expect(ids).toEqual([event.id]);
  });

  it('any body-signature syntax is a configuration change: the plain digest in the field reaches the handler', async () => {
    const plain = bodySignature({ syntax: 'plain', timestamp: { bodyField: 'created_at' } });
    const receiver = createReceiver({ secrets: SECRET, profile: plain });
    const ids: string[] = [];
    receiver.on('message.delivered', (event) => {
      ids.push(event.id as string);
    });
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET, profile: plain });
    expectAccepted(
      await receiver.receive({ method: 'POST', headers: signed.headers, rawBody: signed.body }),
      200,
    );
    expect(ids).toEqual([event.id]);
  });
});

describe('bodySignature: an event without an id is deduplicated by what the sender signed', () => {
  it('five re-spellings of one captured delivery run the handler exactly once', async () => {
    const receiver = createReceiver({ secrets: SECRET, profile });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs++;
    });
    const { id: _id, ...event } = createEvent('message.delivered');
    const captured = signRequest({ payload: JSON.stringify(event), secret: SECRET, profile }).body as string;
    const member = /,"signature":"(t=\d+,v1=([0-9a-f]+))"/.exec(captured) as RegExpExecArray;
    const [whole, value, hex] = member as unknown as [string, string, string];
    const unsigned = captured.replace(whole, '');
    const respelled = [
      captured,
      captured.replace(hex, hex.toUpperCase()),
      `{"signature":"${value}",${unsigned.slice(1)}`,
      captured.replace(value, `${value},v1=${hex}`),
      captured.replace('"signature":', '"signature" :'),
    ];
    expect(new Set(respelled).size).toBe(5);
    const outcomes = [];
    for (const body of respelled) {
      outcomes.push(
        await receiver.receive({
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          rawBody: new TextEncoder().encode(body),
        }),
      );
    }
    expect(outcomes.map((outcome) => [outcome.status, outcome.duplicate ?? false])).toEqual([
      [200, false],
      [200, true],
      [200, true],
      [200, true],
      [200, true],
    ]);
    expect(runs).toBe(1);
  });
});
