import { describe, expect, it } from 'vitest';
import { getHeader } from '../../src/adapter.js';
import { isJsonContentType } from '../../src/contract/request.js';
import { createReceiver } from '../../src/index.js';
import { signPayload } from '../../src/signature/index.js';
import { deliveredEvent, expectAccepted, expectRejected, SECRET } from '../support/unit.js';

describe('getHeader', () => {
  it('finds a header whatever its case, in a Node header object or a Fetch Headers', () => {
    expect(getHeader({ 'Webhook-Signature': 't=1,v1=ab' }, 'webhook-signature')).toBe('t=1,v1=ab');
    expect(getHeader({ 'webhook-signature': 'x' }, 'webhook-signature')).toBe('x');
    expect(getHeader(new Headers({ 'WEBHOOK-SIGNATURE': 'y' }), 'webhook-signature')).toBe('y');
    expect(getHeader({}, 'webhook-signature')).toBeUndefined();
    expect(getHeader(new Headers(), 'webhook-signature')).toBeUndefined();
  });

  it('finds a header asked for in any case, in a Node header object (lower-case keys) or a hand-made one', () => {
    expect(getHeader({ 'content-type': 'application/json' }, 'Content-Type')).toBe('application/json');
    expect(getHeader({ 'X-Custom': 'a' }, 'x-CUSTOM')).toBe('a');
    expect(getHeader(new Headers({ 'content-type': 'b' }), 'CONTENT-TYPE')).toBe('b');
  });

  it('joins repeated headers with a comma, as HTTP allows', () => {
    expect(getHeader({ 'webhook-signature': ['t=1', 'v1=ab'] }, 'webhook-signature')).toBe('t=1,v1=ab');
  });
});

describe('isJsonContentType', () => {
  it('accepts application/json and +json types, parameters and case ignored', () => {
    for (const type of [
      'application/json',
      'Application/JSON; charset=utf-8',
      'application/cloudevents+json',
    ]) {
      expect(isJsonContentType(type)).toBe(true);
    }
    for (const type of [
      undefined,
      '',
      'text/json',
      'text/plain',
      'application/jsonx',
      'multipart/form-data',
    ]) {
      expect(isJsonContentType(type)).toBe(false);
    }
  });
});

describe('signatureHeader option', () => {
  it('looks the configured name up case-insensitively; the default name is then not read', async () => {
    const receiver = createReceiver({ secrets: SECRET, signatureHeader: 'X-Messaging-Signature' });
    const body = JSON.stringify(deliveredEvent());
    const signature = signPayload({ payload: body, secret: SECRET });
    const send = (headers: Record<string, string>) =>
      receiver.receive({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        rawBody: body,
      });
    expectAccepted(await send({ 'x-messaging-signature': signature }), 200);
    expectRejected(await send({ 'webhook-signature': signature }), 401, 'missing_signature');
  });
});

describe('requestId given by the caller', () => {
  it('answers, and runs handlers, under the id the caller gave; a new req_ id otherwise', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const seen: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      seen.push(ctx.requestId);
    });
    const body = JSON.stringify(deliveredEvent());
    const headers = {
      'content-type': 'application/json',
      'webhook-signature': signPayload({ payload: body, secret: SECRET }),
    };
    const given = await receiver.receive({
      requestId: 'req_from_the_adapter',
      method: 'POST',
      headers,
      rawBody: body,
    });
    expect(given.status).toBe(200);
    expect(given.requestId).toBe('req_from_the_adapter');
    expect(given.headers['x-request-id']).toBe('req_from_the_adapter');
    expect(seen).toEqual(['req_from_the_adapter']);
    const fresh = await receiver.receive({ method: 'GET', headers: {} });
    expect(fresh.requestId).toMatch(/^req_[0-9a-f]{32}$/);
  });
});
