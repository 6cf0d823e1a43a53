import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent } from '../../src/testing.js';
import { requestHead as rawHead, sign } from '../support/independent-signing.js';
import { rawExchange } from '../support/raw-http.js';
import { BODY_TIMEOUT_MS, type StartTarget, type Target } from './targets.js';

/*
 * A body that trickles in, or stops short of its Content-Length while the client waits, is answered
 * 408 body_timeout once bodyTimeoutMs passed, and the connection is closed: in every adapter alike.
 */
export function describeSlowBody(name: string, start: StartTarget): void {
  describe(`slow body through ${name}`, () => {
    let target: Target;
    beforeAll(async () => {
      target = await start();
    });
    const requestHead = (headers: Record<string, string | number>) =>
      rawHead(headers, 'POST', new URL(target.url).pathname);
    afterAll(() => target.close());

    it('a body stalled short of its Content-Length: 408 body_timeout, connection closed, nothing run', async () => {
      const event = createEvent('message.delivered');
      const body = JSON.stringify(event);
      const head = requestHead({
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'webhook-signature': sign(body),
      });
      const started = performance.now();
      const answer = await rawExchange(target.port, [head, body.slice(0, 20)], { untilClose: true });
      const elapsed = performance.now() - started;
      expect(answer.statuses).toEqual([408]);
      expect(answer.reasons).toEqual(['body_timeout']);
      expect(answer.closed).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 20);
      expect(await target.handled()).not.toContain(event.id);
    });

    it('a chunked body whose last chunk never comes: 408 body_timeout, closed', async () => {
      const head = requestHead({
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        'webhook-signature': sign('{}'),
      });
      // A byte per chunk and no last chunk: the deadline, not a byte count, ends it.
      const chunks = Array.from({ length: 3 }, () => '1\r\n{\r\n');
      const answer = await rawExchange(target.port, [head, ...chunks], { untilClose: true });
      expect(answer.statuses).toEqual([408]);
      expect(answer.reasons).toEqual(['body_timeout']);
      expect(answer.closed).toBe(true);
    });
  });
}
