import { createServer } from 'node:http';
import request from 'supertest';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { createReceiver, defaultEvents, verifySignature } from '../../src/index.js';
import { createEventParser } from '../../src/pipeline/3-event.js';
import {
  createEvent,
  createId,
  createPhoneNumber,
  createSignedRequest,
  isoTimestamp,
  signPayload,
} from '../../src/testing.js';

const SECRET = 'whsec_testing_kit_5e4d3c2b1a';
const parse = createEventParser(defaultEvents);
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;

describe('event factories', () => {
  it.each(Object.keys(defaultEvents) as (keyof typeof defaultEvents)[])(
    '%s: every factory event passes the receiver schema and is processed',
    async (type) => {
      const receiver = createReceiver({ secrets: SECRET });
      const seen: unknown[] = [];
      receiver.on(type, (event) => {
        seen.push(event);
      });
      for (let i = 0; i < 50; i++) {
        const event = createEvent(type);
        expect(parse(event)).toMatchObject({ ok: true, known: true });
        const signed = createSignedRequest(event, { secret: SECRET });
        const outcome = await receiver.receive({
          method: 'POST',
          headers: signed.headers,
          rawBody: signed.body,
        });
        expect(outcome.status).toBe(200);
      }
      expect(seen).toHaveLength(50);
    },
  );

  it('has ids in the service style, unique, phone numbers in international format, timestamps with an offset', () => {
    const events = Array.from({ length: 1000 }, () => createEvent('message.delivered'));
    expect(new Set(events.map((event) => event.id)).size).toBe(1000);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(event.data.message_id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(event.data.to).toMatch(/^\+1555\d{7}$/);
      expect(event.created_at).toMatch(ISO_WITH_OFFSET);
    }
    expect(Math.abs(Date.parse(events[0]?.created_at as string) - Date.now())).toBeLessThan(5000);
    expect(createId('req_')).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(createPhoneNumber()).toMatch(/^\+\d{11}$/);
    expect(isoTimestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe('2026-01-02T03:04:05.000+00:00');
  });

  it('merges partial data, keeps the other defaults valid, and takes id and created_at overrides', () => {
    const event = createEvent('message.delivered', {
      id: 'evt_fixed',
      created_at: new Date(Date.UTC(2026, 10, 21, 10)),
      data: { operator: 'op_x' },
    });
    expect(event).toMatchObject({
      id: 'evt_fixed',
      type: 'message.delivered',
      created_at: '2026-11-21T10:00:00.000+00:00',
      data: {
        operator: 'op_x',
        message_id: expect.stringMatching(/^msg_/),
        to: expect.stringMatching(/^\+/),
      },
    });
    expect(parse(event).ok).toBe(true);
    expectTypeOf(event.data.operator).toEqualTypeOf<string>();
  });

  it('builds events of types outside the catalogue from the data given', () => {
    const event = createEvent('campaign.completed', { data: { campaign_id: 'cmp_1', sent: 3 } });
    expect(event).toMatchObject({ type: 'campaign.completed', data: { campaign_id: 'cmp_1', sent: 3 } });
    expect(event.id).toMatch(/^evt_/);
    expectTypeOf(event.data).toEqualTypeOf<{ campaign_id: string; sent: number }>();
    const parsed = parse(event);
    expect(parsed).toMatchObject({ ok: true, known: false });
  });
});

describe('createSignedRequest', () => {
  it('signs exactly the bytes it returns, with the receiver’s header and content type', () => {
    const event = createEvent('message.delivered', { data: { operator: 'opérateur 😀' } });
    const signed = createSignedRequest(event, { secret: SECRET, timestamp: 1_700_000_000 });
    expect(signed.body).toBe(JSON.stringify(event));
    expect(Object.keys(signed.headers).sort()).toEqual(['content-type', 'webhook-signature']);
    expect(signed.headers['content-type']).toBe('application/json');
    const header = signed.headers['webhook-signature'] as string;
    expect(header.startsWith('t=1700000000,v1=')).toBe(true);
    expect(header).toBe(signPayload({ payload: signed.body, secret: SECRET, timestamp: 1_700_000_000 }));
    const verified = verifySignature({ payload: signed.body, header, secrets: SECRET, now: 1_700_000_000 });
    expect(verified.ok).toBe(true);
  });

  it('takes a string body as it is and a custom header name', () => {
    const body = '{ "type": "message.failed",\n  "data": {} }';
    const signed = createSignedRequest(body, { secret: SECRET, signatureHeader: 'X-Webhook-Signature' });
    expect(signed.body).toBe(body);
    expect(signed.headers['x-webhook-signature']).toMatch(/^t=\d+,v1=/);
  });

  it('gives a Web Request with the same bytes, a fresh one on each access', async () => {
    const signed = createSignedRequest(createEvent('message.delivered'), {
      secret: SECRET,
      url: 'https://example.test/hooks',
    });
    const first = signed.request;
    expect(first).toBeInstanceOf(Request);
    expect(first.method).toBe('POST');
    expect(first.url).toBe('https://example.test/hooks');
    expect(first.headers.get('webhook-signature')).toBe(signed.headers['webhook-signature']);
    expect(await first.text()).toBe(signed.body);
    expect(await signed.request.text()).toBe(signed.body);

    const receiver = createReceiver({ secrets: SECRET });
    const web = signed.request;
    const outcome = await receiver.receive({
      method: web.method,
      headers: web.headers,
      rawBody: new Uint8Array(await web.arrayBuffer()),
    });
    expect(outcome.status).toBe(200);
  });

  it('works with supertest: .set(headers).send(body) reaches a real receiver verified', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const ids: string[] = [];
    receiver.on('message.delivered', (event) => {
      ids.push(event.id as string);
    });
    const server = createServer(createNodeHandler(receiver));
    try {
      const event = createEvent('message.delivered');
      const { headers, body } = createSignedRequest(event, { secret: SECRET });
      const response = await request(server).post('/webhooks').set(headers).send(body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ received: true });
      expect(ids).toEqual([event.id]);

      const stale = createSignedRequest(event, {
        secret: SECRET,
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      });
      const rejected = await request(server).post('/webhooks').set(stale.headers).send(stale.body);
      expect(rejected.status).toBe(401);
      expect(rejected.body.error.code).toBe('stale_timestamp');
    } finally {
      server.close();
    }
  });
});

describe('createId', () => {
  it('is a ULID after its prefix: its first 10 characters are the time, so ids of later milliseconds sort later', () => {
    const decode = (id: string) =>
      [...id.slice(4, 14)].reduce(
        (time, char) => time * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(char),
        0,
      );
    // The clock is the test's: the second id is made one millisecond after the first, exactly.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 2, 3, 4, 5, 678) });
    try {
      const first = createId('evt_');
      expect(decode(first)).toBe(Date.now());
      vi.advanceTimersByTime(1);
      const second = createId('evt_');
      expect(decode(second)).toBe(decode(first) + 1);
      expect(second.slice(4) > first.slice(4)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
