import express from 'express4';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { SECRET } from './conformance-receiver.js';
import { runExpressConformance } from './express-conformance.js';

// Express 4's parsers set req.body = {} on every request they skip (another content type): the stream is
// still unread, and the adapter reads it.
runExpressConformance('4', express);

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
