import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import { describe, expect, it } from 'vitest';
import { createPagesHandler, createRouteHandler } from '../../adapters/next.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen } from './conformance.js';
import { createConformanceReceiver, SECRET } from './conformance-receiver.js';

/**
 * A dynamic route's segments, as each Next.js major hands them to the adapters: the App Router's route context
 * (a promise from Next 15 on, an object in 13 and 14) and the Pages Router's req.query (filled by Next's own API
 * resolver). The built app's routes run in next.test.ts.
 */
describe('next.js dynamic segments reach the receiver as request.params', () => {
  const signed = () => createSignedRequest(createEvent('message.delivered'), { secret: SECRET });

  it.each([
    ['a promise (Next 15 on)', () => Promise.resolve({ account: 'acme' })],
    ['an object (Next 13 and 14)', () => ({ account: 'acme' })],
  ])('App Router, context.params as %s', async (_title, params) => {
    const { receiver, handled } = createConformanceReceiver();
    const { request } = signed();
    const response = await createRouteHandler(receiver)(request, { params: params() });
    expect(response.status).toBe(200);
    expect(handled.map((seen) => seen.params)).toEqual([{ account: 'acme' }]);
  });

  it("Pages Router: the query Next's API resolver gives the route", async () => {
    const { receiver, handled } = createConformanceReceiver();
    const route = { default: createPagesHandler(receiver), config: { api: { bodyParser: false } } };
    const apiContext = {
      previewModeId: '',
      previewModeEncryptionKey: '',
      previewModeSigningKey: '',
      dev: false,
    };
    // What `next start` passes for pages/api/webhooks/[account].js at /api/webhooks/acme.
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void apiResolver(req, res, { account: 'acme' }, route, apiContext, false);
    });
    try {
      const { body, headers } = signed();
      const response = await fetch(`${await listen(server)}/api/webhooks/acme`, {
        method: 'POST',
        headers,
        body,
      });
      expect(response.status).toBe(200);
      expect(handled.map((seen) => seen.params)).toEqual([{ account: 'acme' }]);
    } finally {
      await closeServer(server);
    }
  });
});
