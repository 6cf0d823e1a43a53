import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent } from '../../src/testing.js';
import { requestHead as rawHead, sign } from '../support/independent-signing.js';
import { rawExchange } from '../support/raw-http.js';
import { MAX_BODY_BYTES, type StartTarget, type Target } from './targets.js';

const JSON_TYPE = { 'content-type': 'application/json' };

/* What HTTP clients do wrong, and what every adapter answers, over raw sockets. */
export function describeProtocolAbuse(name: string, start: StartTarget): void {
  describe(`protocol abuse through ${name}`, () => {
    let target: Target;
    const exchange = (parts: (string | Uint8Array)[], options?: Parameters<typeof rawExchange>[2]) =>
      rawExchange(target.port, parts, options);
    beforeAll(async () => {
      target = await start();
    });
    /** A request head for the target's webhook route (its path differs from one target to another). */
    const requestHead = (headers: Record<string, string | number>, method?: string) =>
      rawHead(headers, method, new URL(target.url).pathname);
    /** A fresh signed event as a complete raw request, plus its id. */
    function signedRequest(headers: Record<string, string> = {}) {
      const event = createEvent('message.delivered');
      const body = JSON.stringify(event);
      const head = requestHead({
        ...JSON_TYPE,
        'content-length': Buffer.byteLength(body),
        'webhook-signature': sign(body),
        ...headers,
      });
      return { id: event.id as string, body, request: head + body };
    }

    afterAll(() => target.close());

    it('an oversize body with Content-Length: 413 before it is read, connection closed', async () => {
      const head = requestHead({
        ...JSON_TYPE,
        'content-length': MAX_BODY_BYTES + 1,
        'webhook-signature': sign('x'),
      });
      const answer = await exchange([head, 'x'.repeat(1024)], { untilClose: true });
      expect(answer.reasons).toEqual(['payload_too_large']);
      expect(answer.statuses).toEqual([413]);
      expect(answer.closed).toBe(true);
    });

    it('an oversize chunked body: 413 once it passes the limit, connection closed', async () => {
      const head = requestHead({
        ...JSON_TYPE,
        'transfer-encoding': 'chunked',
        'webhook-signature': sign('x'),
      });
      const chunk = `${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`;
      const answer = await exchange([head, ...Array.from({ length: 6 }, () => chunk)], { untilClose: true });
      expect(answer.statuses).toEqual([413]);
      expect(answer.reasons).toEqual(['payload_too_large']);
      expect(answer.closed).toBe(true);
    });

    it('a signed chunked body is processed', async () => {
      const event = createEvent('message.delivered');
      const body = JSON.stringify(event);
      const head = requestHead({
        ...JSON_TYPE,
        'transfer-encoding': 'chunked',
        'webhook-signature': sign(body),
      });
      const half = Math.floor(body.length / 2);
      const chunks = [body.slice(0, half), body.slice(half)].map(
        (part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`,
      );
      const answer = await exchange([head, ...chunks, '0\r\n\r\n']);
      expect(answer.statuses).toEqual([200]);
      expect(await target.handled()).toContain(event.id);
    });

    it('a Content-Length shorter than the body: the declared bytes fail the signature, the rest is refused', async () => {
      const { body, id } = signedRequest();
      const head = requestHead({ ...JSON_TYPE, 'content-length': 10, 'webhook-signature': sign(body) });
      const answer = await exchange([head + body], { untilClose: true });
      // Node's parser ends the body at 10 bytes (their signature fails: 401) and refuses the leftover bytes,
      // not a request, with 400 and a closed connection; that refusal may overtake the 401.
      expect(answer.statuses.length).toBeGreaterThan(0);
      expect(answer.statuses.every((status) => status === 401 || status === 400)).toBe(true);
      expect(answer.closed).toBe(true);
      expect(await target.handled()).not.toContain(id);
    });

    it('a gzip body signed before compression: 415 unsupported_encoding, in every adapter alike', async () => {
      const event = createEvent('message.delivered');
      const body = JSON.stringify(event);
      const gzipped = gzipSync(body);
      const head = requestHead({
        ...JSON_TYPE,
        'content-encoding': 'gzip',
        'content-length': gzipped.length,
        'webhook-signature': sign(body),
      });
      const answer = await exchange([head, gzipped]);
      expect(answer.statuses).toEqual([415]);
      expect(answer.reasons).toEqual(['unsupported_encoding']);
      expect(await target.handled()).not.toContain(event.id);
    });

    it('two signature header lines: joined as HTTP allows, two timestamps are malformed (401)', async () => {
      const { body } = signedRequest();
      const head = requestHead({
        ...JSON_TYPE,
        'content-length': Buffer.byteLength(body),
        'webhook-signature': sign(body),
      });
      const second = head.replace(
        '\r\n\r\n',
        `\r\nwebhook-signature: ${sign(body, Math.floor(Date.now() / 1000) - 1)}\r\n\r\n`,
      );
      const answer = await exchange([second + body]);
      expect(answer.statuses).toEqual([401]);
      expect(answer.reasons).toEqual(['malformed_signature']);
    });

    it('a 64 KiB header: refused by Node before the adapter runs (431), connection closed', async () => {
      const { body } = signedRequest();
      const head = requestHead({
        ...JSON_TYPE,
        'content-length': Buffer.byteLength(body),
        'x-padding': 'a'.repeat(64 * 1024),
      });
      const answer = await exchange([head + body], { untilClose: true });
      expect(answer.statuses).toEqual([431]);
      expect(answer.closed).toBe(true);
    });

    it.each(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
      '%s: 405 with Allow: POST',
      async (method) => {
        const answer = await exchange([requestHead({ 'content-length': 0 }, method)], {
          headersOnly: method === 'HEAD',
        });
        expect(answer.statuses).toEqual([405]);
        // A HEAD answer has no body to carry the reason.
        expect(answer.reasons).toEqual([method === 'HEAD' ? '' : 'method_not_allowed']);
      },
    );

    it.each([
      ['application/json; charset=utf-8', 200],
      ['APPLICATION/JSON', 200],
      ['application/cloudevents+json', 200],
      ['text/plain', 415],
      ['application/x-www-form-urlencoded', 415],
      ['a/b/c;;', 415],
      [undefined, 415],
    ] as const)('Content-Type %s: %i', async (type, status) => {
      const { body, id } = signedRequest();
      const headers: Record<string, string> = {
        'content-length': String(Buffer.byteLength(body)),
        'webhook-signature': sign(body),
      };
      if (type !== undefined) headers['content-type'] = type;
      const answer = await exchange([requestHead(headers) + body]);
      expect(answer.statuses).toEqual([status]);
      if (status === 415) expect(answer.reasons).toEqual(['unsupported_media_type']);
      expect((await target.handled()).includes(id)).toBe(status === 200);
    });

    it('pipelined requests are answered in order', async () => {
      const first = signedRequest();
      const second = signedRequest();
      const answer = await exchange([first.request + second.request], { answers: 2 });
      expect(answer.statuses).toEqual([200, 200]);
      expect(await target.handled()).toEqual(expect.arrayContaining([first.id, second.id]));
    });

    it('keep-alive after a 413: the connection is closed, the request behind it is not read; a new one works', async () => {
      const head = requestHead({
        ...JSON_TYPE,
        'content-length': MAX_BODY_BYTES + 1,
        'webhook-signature': sign('x'),
      });
      const behind = signedRequest();
      const answer = await exchange([head + behind.request], { untilClose: true });
      expect(answer.statuses).toEqual([413]);
      expect(answer.closed).toBe(true);
      expect(await target.handled()).not.toContain(behind.id);
      expect((await exchange([behind.request])).statuses).toEqual([200]);
    });

    it('a client that aborts mid-body: nothing runs, and the server goes on answering', async () => {
      const aborted = signedRequest();
      await exchange([aborted.request.slice(0, -10)], { abortAfterWrite: true });
      const next = signedRequest();
      expect((await exchange([next.request])).statuses).toEqual([200]);
      expect(await target.handled()).not.toContain(aborted.id);
      expect(await target.handled()).toContain(next.id);
    });
  });
}
