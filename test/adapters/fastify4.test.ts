import Fastify from 'fastify4';
import { describe, expect, it } from 'vitest';
import webhooks, { type FastifyWebhooksOptions } from '../../adapters/fastify.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { type ConformanceServer, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

/** The plugin as Fastify 4 registers it: its types are written against Fastify 5's, the same at run time. */
const plugin = webhooks as unknown as (instance: unknown, options: FastifyWebhooksOptions) => Promise<void>;

runConformanceSuite('fastify 4', async (profile): Promise<ConformanceServer> => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const app = Fastify();
  await app.register(plugin, { receiver, path: '/webhooks/:account' });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${base}/webhooks/${ACCOUNT}`, handled: async () => handled, close: () => app.close() };
});

describe('fastify 4 plugin', () => {
  it('registers on Fastify 4 and leaves JSON parsing of the other routes alone', async () => {
    const { receiver, handled } = createConformanceReceiver();
    const app = Fastify();
    try {
      await app.register(plugin, { receiver, path: '/webhooks' });
      app.post('/after', async (request) => ({ parsed: request.body }));
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      const echo = await fetch(`${base}/after`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"hello":"world"}',
      });
      expect(await echo.json()).toEqual({ parsed: { hello: 'world' } });
      const event = createEvent('message.delivered');
      const signed = createSignedRequest(event, { secret: SECRET });
      const reply = await fetch(`${base}/webhooks`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
      });
      expect(reply.status).toBe(200);
      expect(handled.map((seen) => seen.id)).toEqual([event.id]);
    } finally {
      await app.close();
    }
  });
});
