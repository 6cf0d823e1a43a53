import { createServer } from 'node:http';
import express from 'express4';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { createReceiver, type SignatureProfile } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { createConformanceReceiver, MAX_BODY_BYTES, SECRET } from './conformance-receiver.js';

type App = ReturnType<typeof express>;

function conformanceApp(mount: (app: App, handler: ReturnType<typeof webhookHandler>) => void) {
  return async (profile: SignatureProfile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const app = express();
    mount(app, webhookHandler(receiver));
    const server = createServer(app);
    const url = `${await listen(server)}/webhooks`;
    return { url, handled: async () => handled, close: () => closeServer(server) };
  };
}

runConformanceSuite(
  'express 4, body read from the stream',
  conformanceApp((app, handler) => {
    app.all('/webhooks', handler);
    app.use(express.json());
  }),
);

// Express 4's parsers set req.body = {} on every request they skip (another content type): the stream is
// still unread, and the adapter reads it.
runConformanceSuite(
  'express 4 behind express.raw()',
  conformanceApp((app, handler) => {
    app.post('/webhooks', express.raw({ type: 'application/json', limit: MAX_BODY_BYTES }), handler);
  }),
  { skip: ['method_not_allowed', 'payload_too_large_declared', 'payload_too_large_chunked'] },
);

runConformanceSuite(
  'express 4 behind express.json({ verify }) keeping rawBody',
  conformanceApp((app, handler) => {
    app.use(express.json({ verify: keepRawBody }));
    app.post('/webhooks', handler);
  }),
  { skip: ['method_not_allowed', 'invalid_json', 'payload_too_large_declared', 'payload_too_large_chunked'] },
);

function keepRawBody(req: unknown, _res: unknown, buf: Buffer): void {
  (req as { rawBody?: Buffer }).rawBody = buf;
}

describe('express 4 adapter', () => {
  it('answers 500 body_already_parsed naming the Express fix when express.json() ran first', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const app = express();
    app.use(express.json());
    app.post('/webhooks', webhookHandler(receiver));
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const reply = await request(app).post('/webhooks').set(headers).send(body).timeout(5000);
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('body_already_parsed');
    expect(reply.body.error.message).toContain('before app.use(express.json())');
  });

  it('reads the stream a skipping express.json() left unread behind its empty req.body', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const app = express();
    app.use(express.json({ type: 'application/vnd.other+json' }));
    app.post('/webhooks', webhookHandler(receiver));
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const reply = await request(app).post('/webhooks').set(headers).send(body).timeout(5000);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ received: true });
  });
});
