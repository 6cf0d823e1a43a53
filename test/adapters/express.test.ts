import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { createReceiver, type WebhookHandlerError } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { SECRET } from './conformance-receiver.js';
import { keepRawBody, runExpressConformance } from './express-conformance.js';

runExpressConformance('5', express);

/** A receiver that records what onError and handlers saw. */
function recordingReceiver() {
  const errors: WebhookHandlerError[] = [];
  const events: string[] = [];
  const receiver = createReceiver({ secrets: SECRET });
  receiver.on('message.delivered', (event) => {
    events.push(event.data.message_id);
  });
  receiver.onError((error) => {
    errors.push(error);
  });
  return { receiver, errors, events };
}

function signed() {
  const event = createEvent('message.delivered');
  return { event, ...createSignedRequest(event, { secret: SECRET }) };
}

describe('express adapter with supertest', () => {
  it('reads the raw stream when mounted before express.json(), and the rest of the app still parses JSON', async () => {
    const { receiver, events } = recordingReceiver();
    const app = express();
    app.post('/webhooks', webhookHandler(receiver));
    app.use(express.json());
    app.post('/api/echo', (req, res) => {
      res.json({ parsed: req.body });
    });
    const { event, body, headers } = signed();
    const reply = await request(app).post('/webhooks').set(headers).send(body);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ received: true });
    expect(events).toEqual([event.data.message_id]);
    const echo = await request(app).post('/api/echo').send({ hello: 'world' });
    expect(echo.body).toEqual({ parsed: { hello: 'world' } });
  });

  it('uses the Buffer left by express.raw()', async () => {
    const { receiver, events } = recordingReceiver();
    const app = express();
    app.post('/webhooks', express.raw({ type: 'application/json' }), webhookHandler(receiver));
    const { event, body, headers } = signed();
    const reply = await request(app).post('/webhooks').set(headers).send(body);
    expect(reply.status).toBe(200);
    expect(events).toEqual([event.data.message_id]);
  });

  it('uses the rawBody captured by express.json({ verify }) even though req.body is parsed', async () => {
    const { receiver, events, errors } = recordingReceiver();
    const app = express();
    app.use(express.json({ verify: keepRawBody }));
    app.post('/webhooks', webhookHandler(receiver));
    // Pretty-printed: re-serializing req.body would not match the signature, the captured bytes do.
    const event = createEvent('message.delivered');
    const { body, headers } = createSignedRequest(JSON.stringify(event, null, 2), { secret: SECRET });
    const reply = await request(app).post('/webhooks').set(headers).send(body);
    expect(reply.status).toBe(200);
    expect(events).toEqual([event.data.message_id]);
    expect(errors).toEqual([]);
  });

  it('answers 500 body_already_parsed naming the Express fix when express.json() ran first', async () => {
    const { receiver, events, errors } = recordingReceiver();
    const app = express();
    app.use(express.json());
    app.post('/webhooks', webhookHandler(receiver));
    const { body, headers } = signed();
    const reply = await request(app).post('/webhooks').set(headers).send(body).timeout(5000);
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('body_already_parsed');
    expect(reply.body.error.message).toContain('got a plain object (already-parsed JSON)');
    expect(reply.body.error.message).toContain('before app.use(express.json())');
    expect(reply.body.error.message).toContain('express.raw(');
    expect(reply.body.error.message).not.toContain('Fastify');
    expect(reply.headers['x-request-id']).toBe(reply.body.error.request_id);
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['body_already_parsed']);
    expect(errors[0]?.message).toContain('express.json({ verify');
  });

  it('does not hang when a middleware consumed the stream without leaving a body', async () => {
    const { receiver, errors } = recordingReceiver();
    const app = express();
    app.use((req, _res, next) => {
      req.resume();
      req.on('end', () => next());
    });
    app.post('/webhooks', webhookHandler(receiver));
    const { body, headers } = signed();
    const started = Date.now();
    const reply = await request(app).post('/webhooks').set(headers).send(body).timeout(5000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('body_already_parsed');
    expect(reply.body.error.message).toContain('got undefined');
    expect(errors).toHaveLength(1);
  });

  it('verifies the exact text left by express.text()', async () => {
    const { receiver, events } = recordingReceiver();
    const app = express();
    app.post('/webhooks', express.text({ type: 'application/json' }), webhookHandler(receiver));
    const event = createEvent('message.delivered', { data: { operator: 'opérateur 😀' } });
    const { body, headers } = createSignedRequest(event, { secret: SECRET });
    const reply = await request(app).post('/webhooks').set(headers).send(body);
    expect(reply.status).toBe(200);
    expect(events).toEqual([event.data.message_id]);
  });
});
