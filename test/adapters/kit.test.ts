import { createServer } from 'node:http';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import * as lambda from '../../adapters/aws-lambda.js';
import * as azure from '../../adapters/azure-functions.js';
import * as express from '../../adapters/express.js';
import * as fastify from '../../adapters/fastify.js';
import * as fetchAdapter from '../../adapters/fetch.js';
import * as gcf from '../../adapters/google-cloud-functions.js';
import * as koa from '../../adapters/koa.js';
import * as next from '../../adapters/next.js';
import * as node from '../../adapters/node.js';
import { createAdapter } from '../../src/adapter.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen } from '../support/http.js';
import { SECRET } from './conformance-receiver.js';

/** Every adapter made from a receiver (or a factory of one), by the name the one naming rule gives it. */
const handlers: Array<[string, (source: never) => unknown]> = [
  ['express', express.createExpressHandler],
  ['node', node.createNodeHandler],
  ['fetch', fetchAdapter.createFetchHandler],
  ['google-cloud-functions', gcf.createCloudFunctionHandler],
  ['azure-functions', azure.createAzureHandler],
  ['aws-lambda', lambda.createLambdaHandler],
  ['next', next.createNextRouteHandler],
  ['next', next.createNextPagesHandler],
  ['koa', koa.createKoaMiddleware],
];

describe('the adapter kit', () => {
  it.each(handlers)('%s checks its receiver when made, with the one error text', (platform, make) => {
    for (const [given, got] of [
      [undefined, 'none'],
      [{}, 'something else'],
    ] as const) {
      const made = () => make(given as never);
      expect(made).toThrow(WebhookConfigError);
      expect(made).toThrow(
        new RegExp(
          `^messaging-webhooks/${platform} needs a receiver \\(createReceiver from messaging-webhooks\\), or a function that creates one at the first request; got ${got}: .+\\.$`,
        ),
      );
    }
  });

  it('a plugin that holds the receiver takes no factory, and says so', () => {
    const factory = () => createReceiver({ secrets: SECRET });
    expect(() => fastify.createFastifyPlugin(factory as never, { path: '/webhooks' })).toThrow(
      /^messaging-webhooks\/fastify needs a receiver \(createReceiver from messaging-webhooks\); got a function: app\.register\(createFastifyPlugin\(receiver, \{ path: '\/webhooks' \}\)\)\.$/,
    );
  });

  it('answers 500 receiver_misconfigured when a factory returns no receiver, once per request', async () => {
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      const handler = fetchAdapter.createFetchHandler(() => ({}) as never);
      const request = () => new Request('http://localhost/webhooks', { method: 'POST', body: '{}' });
      const response = await handler(request());
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('receiver_misconfigured');
      expect(error.message).toContain('the factory returned something else');
      expect(errors).toHaveLength(1);
    } finally {
      console.error = original;
    }
  });

  it('keeps the old names as the same functions', () => {
    expect(express.webhookHandler).toBe(express.createExpressHandler);
    expect(koa.webhookMiddleware).toBe(koa.createKoaMiddleware);
    expect(gcf.createCloudFunction).toBe(gcf.createCloudFunctionHandler);
    expect(next.createRouteHandler).toBe(next.createNextRouteHandler);
    expect(next.createPagesHandler).toBe(next.createNextPagesHandler);
    expect(fastify.default).toBe(fastify.webhooks);
  });

  it('serves a platform of its own, read and write given, over a real socket', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const seen: unknown[] = [];
    receiver.on('message.delivered', (event) => {
      seen.push(event.id);
    });
    // A platform that hands its handler the body as text and takes a plain answer object back.
    type PlatformRequest = { verb: string; head: Record<string, string>; text: string };
    const handle = createAdapter<[PlatformRequest], { code: number; text: string }>(receiver, {
      name: 'test-platform',
      usage: 'platform(handle)',
      read: (request) => ({ method: request.verb, headers: request.head, rawBody: request.text }),
      write: (outcome) => ({ code: outcome.status, text: outcome.body }),
    });
    const server = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const answer = await handle({ verb: req.method ?? 'GET', head: req.headers as never, text });
      res.writeHead(answer.code, { 'content-type': 'application/json' }).end(answer.text);
    });
    const url = await listen(server);
    try {
      const event = createEvent('message.delivered');
      const signed = createSignedRequest(event, { secret: SECRET });
      const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
      expect([response.status, await response.text()]).toEqual([200, '{"received":true}']);
      expect(seen).toEqual([event.id]);
    } finally {
      await closeServer(server);
      await receiver.close();
    }
  });

  it('registers the Fastify plugin by its new name', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const app = Fastify();
    await app.register(fastify.createFastifyPlugin(receiver, { path: '/webhooks' }));
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const reply = await app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: signed.headers,
      payload: signed.body,
    });
    expect(reply.statusCode).toBe(200);
    await app.close();
  });
});
