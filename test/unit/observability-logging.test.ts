import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import { bodySignature, createReceiver, standardWebhooks } from '../../src/index.js';
import type { RejectionDiagnostics } from '../../src/observability/diagnostics.js';
import { signPayload } from '../../src/signature/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { createTestLogger } from '../setup/test-logger.js';

const LIVE = ['whsec_observe_live_0_5e2d7c9a1b3f', 'whsec_observe_live_1_8a4c6e0b2d9f'];
const TEST = 'whsec_observe_test_0_3b7d1f5a9c2e';
const WRONG = 'whsec_observe_wrong_6d2a8c4e0f1b';

function setup(options: { handlerFails?: boolean } = {}) {
  const { logger, lines } = createTestLogger();
  const receiver = createReceiver({ secrets: { live: LIVE, test: [TEST] }, logger });
  receiver.on('message.delivered', () => {
    if (options.handlerFails) throw new Error('boom');
  });
  return { receiver, lines };
}

const request = (body: string, headers: Record<string, string>): ReceiveRequest => ({
  method: 'POST',
  headers,
  rawBody: body,
});

const now = () => Math.floor(Date.now() / 1000);
const sha12 = (body: string) => createHash('sha256').update(body).digest('hex').slice(0, 12);

describe('request log line', () => {
  it("each profile's diagnostics describe its own format, not the default header's", async () => {
    const body = JSON.stringify(createEvent('message.delivered'));
    const formats: string[] = [];
    const profiles = [
      { profile: bodySignature(), secret: LIVE[0] },
      { profile: standardWebhooks, secret: `whsec_${Buffer.from(LIVE[0] as string).toString('base64')}` },
    ];
    for (const { profile, secret } of profiles) {
      const { logger, lines } = createTestLogger();
      const receiver = createReceiver({ secrets: secret, profile, logger });
      await receiver.receive(request(body, { 'content-type': 'application/json' }));
      const diagnostics = lines[0]?.fields.diagnostics as RejectionDiagnostics;
      expect(diagnostics.signature).toMatchObject({ present: false, timestamps: 0, signatures: 0 });
      formats.push(diagnostics.signature.format);
    }
    expect(formats[0]).toMatch(/^a JSON object body with "signature":/);
    expect(formats[1]).toContain('webhook-signature');
    expect(formats[1]).toContain('webhook-timestamp');
    expect(formats[1]).not.toContain('t=<unix seconds>');
  });

  it('one info line per processed request: request id, outcome, event id and type, mode, duration', async () => {
    const { receiver, lines } = setup();
    const event = createEvent('message.delivered');
    const { body, headers } = createSignedRequest(event, { secret: TEST });
    const outcome = await receiver.receive(request(body, headers));
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line?.level).toBe('info');
    expect(line?.message).toBe('webhook processed');
    expect(line?.fields).toEqual({
      requestId: outcome.requestId,
      status: 200,
      outcome: 'processed',
      eventId: event.id,
      eventType: 'message.delivered',
      mode: 'test',
      durationMs: expect.any(Number),
    });
    await receiver.receive(request(body, headers));
    expect(lines[1]?.fields).toMatchObject({ status: 200, outcome: 'duplicate', eventId: event.id });
  });

  it('warn for 4xx, error for 5xx, each with its reason code', async () => {
    const { receiver, lines } = setup({ handlerFails: true });
    await receiver.receive({ method: 'GET', headers: {} });
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), {
      secret: LIVE[0] as string,
    });
    await receiver.receive(request(body, headers));
    expect(lines.map(({ level, message, fields }) => [level, message, fields.status, fields.reason])).toEqual(
      [
        ['warn', 'webhook rejected: method_not_allowed', 405, 'method_not_allowed'],
        ['error', 'webhook rejected: handler_failed', 500, 'handler_failed'],
      ],
    );
    expect(lines[1]?.fields).toMatchObject({ eventType: 'message.delivered', mode: 'live' });
  });

  it('signature_mismatch: body length and hash prefix, header shape, clock skew, the secrets tried by label', async () => {
    const { receiver, lines } = setup();
    const body = JSON.stringify(createEvent('message.delivered'));
    const t = now() - 42;
    const wrong = signPayload({ payload: body, secret: WRONG, timestamp: t });
    // Two v1: one of the right length (compared), one truncated (cannot match).
    const header = `${wrong},v1=abc123`;
    await receiver.receive(
      request(body, { 'content-type': 'application/json', 'webhook-signature': header }),
    );
    const diagnostics = lines[0]?.fields.diagnostics as RejectionDiagnostics;
    expect(lines[0]?.fields.reason).toBe('signature_mismatch');
    expect(diagnostics).toEqual({
      body: { bytes: Buffer.byteLength(body), sha256Prefix: sha12(body) },
      headers: { present: ['content-type', 'webhook-signature'] },
      signature: {
        format: 'webhook-signature: t=<unix seconds>,v1=<hex>',
        present: true,
        timestamps: 1,
        signatures: 2,
        wellFormed: 1,
        clockSkewSeconds: expect.any(Number),
      },
      secretsTried: ['live[0]', 'live[1]', 'test[0]'],
    });
    expect(diagnostics.signature.clockSkewSeconds).toBeGreaterThanOrEqual(42);
    expect(diagnostics.signature.clockSkewSeconds).toBeLessThan(45);
  });

  it('secrets are tried for a signature of the digest length, hex or not, and for no other', async () => {
    const { receiver, lines } = setup();
    const body = JSON.stringify(createEvent('message.delivered'));
    const t = now();
    for (const value of ['z'.repeat(64), 'abc123']) {
      await receiver.receive(
        request(body, { 'content-type': 'application/json', 'webhook-signature': `t=${t},v1=${value}` }),
      );
    }
    const told = lines.map((line) => line.fields.diagnostics as RejectionDiagnostics);
    expect(lines.map((line) => line.fields.reason)).toEqual(['signature_mismatch', 'signature_mismatch']);
    expect(told.map((diagnostics) => diagnostics.signature.wellFormed)).toEqual([0, 0]);
    expect(told.map((diagnostics) => diagnostics.secretsTried)).toEqual([
      ['live[0]', 'live[1]', 'test[0]'],
      [],
    ]);
  });

  it('stale and future timestamps: the skew says which way the clock is off; no secret was tried', async () => {
    const { receiver, lines } = setup();
    const body = JSON.stringify(createEvent('message.delivered'));
    for (const offset of [-900, 900]) {
      const { headers } = createSignedRequest(body, { secret: LIVE[0] as string, timestamp: now() + offset });
      await receiver.receive(request(body, headers));
    }
    expect(lines.map((line) => line.fields.reason)).toEqual(['stale_timestamp', 'future_timestamp']);
    const skews = lines.map(
      (line) => (line.fields.diagnostics as RejectionDiagnostics).signature.clockSkewSeconds,
    );
    expect(skews[0]).toBeGreaterThanOrEqual(900);
    expect(skews[1]).toBeLessThanOrEqual(-899);
    for (const line of lines)
      expect((line.fields.diagnostics as RejectionDiagnostics).secretsTried).toEqual([]);
  });

  it('missing and malformed headers, and requests turned away before the body was read', async () => {
    const { receiver, lines } = setup();
    const body = JSON.stringify(createEvent('message.delivered'));
    await receiver.receive(request(body, { 'content-type': 'application/json' }));
    await receiver.receive(
      request(body, {
        'content-type': 'application/json',
        'webhook-signature': 't=1,t=2,v1=00',
        'user-agent': 'svc',
      }),
    );
    await receiver.receive(request(body, { 'content-type': 'text/plain', 'webhook-signature': 't=1,v1=00' }));
    const [missing, malformed, unsupported] = lines.map(
      (line) => line.fields.diagnostics as RejectionDiagnostics,
    );
    expect(missing?.signature).toEqual({
      format: 'webhook-signature: t=<unix seconds>,v1=<hex>',
      present: false,
      timestamps: 0,
      signatures: 0,
      wellFormed: 0,
    });
    expect(missing?.body?.bytes).toBe(Buffer.byteLength(body));
    expect(malformed?.headers).toEqual({ present: ['content-type', 'user-agent', 'webhook-signature'] });
    expect(malformed?.signature).toEqual({
      format: 'webhook-signature: t=<unix seconds>,v1=<hex>',
      present: true,
      timestamps: 2,
      signatures: 1,
      wellFormed: 0,
    });
    expect(unsupported?.body).toBeUndefined();
    expect(lines.map((line) => line.fields.reason)).toEqual([
      'missing_signature',
      'malformed_signature',
      'unsupported_media_type',
    ]);
  });

  it('never logs a secret, the expected or received signature, or the body', async () => {
    const { receiver, lines } = setup();
    const event = createEvent('message.delivered', { data: { operator: 'op_private_marker_91f3' } });
    const body = JSON.stringify(event);
    const t = now();
    const received = signPayload({ payload: body, secret: WRONG, timestamp: t });
    const expected = [...LIVE, TEST].map((secret) => signPayload({ payload: body, secret, timestamp: t }));
    await receiver.receive(
      request(body, { 'content-type': 'application/json', 'webhook-signature': received }),
    );
    // Verified but invalid: the values of the failing fields stay out too.
    const invalid = JSON.stringify({ ...event, data: { ...event.data, to: 'not-a-number-marker-77' } });
    await receiver.receive(request(invalid, createSignedRequest(invalid, { secret: TEST }).headers));
    expect(lines.map((line) => line.fields.reason)).toEqual(['signature_mismatch', 'invalid_event']);
    const text = JSON.stringify(lines);
    const hexOf = (header: string) => header.slice(header.indexOf('v1=') + 3);
    for (const forbidden of [...LIVE, TEST, WRONG, hexOf(received), ...expected.map(hexOf), body, invalid]) {
      expect(text).not.toContain(forbidden);
    }
    expect(text).not.toContain('op_private_marker_91f3');
    expect(text).not.toContain('not-a-number-marker-77');
  });

  it('a throwing logger does not change the outcome', async () => {
    const throwing = () => {
      throw new Error('log sink full');
    };
    const receiver = createReceiver({
      secrets: TEST,
      logger: { info: throwing, warn: throwing, error: throwing },
    });
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: TEST });
    expect((await receiver.receive(request(body, headers))).status).toBe(200);
    expect((await receiver.receive(request(body, {}))).status).toBe(415);
  });

  it('rejects a logger without info/warn/error at creation', () => {
    expect(() => createReceiver({ secrets: TEST, logger: { info: () => undefined } as never })).toThrow(
      /logger must have info, warn and error/,
    );
  });
});
