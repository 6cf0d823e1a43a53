import { createServer } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import koaBodyParser from 'koa-bodyparser';
import Koa2 from 'koa2';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookMiddleware } from '../../adapters/koa.js';
import { createReceiver, WebhookConfigError, type WebhookHandlerError } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

for (const [major, App] of [
  ['koa 3', Koa],
  ['koa 2', Koa2],
] as const) {
  runConformanceSuite(`${major}, on @koa/router before a body parser`, async (profile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const app = new App();
    // @koa/router matches the route with a parameter and sets ctx.params; the parser runs for the other routes.
    const router = new Router().all('/webhooks/:account', webhookMiddleware(receiver));
    app.use(router.routes());
    app.use(bodyParser());
    const server = createServer(app.callback());
    const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
    return { url, handled: async () => handled, close: () => closeServer(server) };
  });
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => closeServer(server)));
});

async function serve(app: Koa): Promise<string> {
  const server = createServer(app.callback());
  servers.push(server);
  return listen(server);
}

function recordingReceiver() {
  const errors: WebhookHandlerError[] = [];
  const receiver = createReceiver({ secrets: SECRET });
  receiver.onError((error) => {
    errors.push(error);
  });
  return { receiver, errors };
}

async function deliver(base: string, path = '/webhooks') {
  const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
  const response = await fetch(`${base}${path}`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.json() };
}

describe('koa middleware', () => {
  for (const [name, parser] of [
    ['@koa/bodyparser', bodyParser()],
    ['koa-bodyparser', koaBodyParser()],
  ] as const) {
    it(`answers 500 body_already_parsed naming the fix when ${name} ran first`, async () => {
      const { receiver, errors } = recordingReceiver();
      const app = new Koa();
      app.use(parser);
      app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
      const reply = await deliver(await serve(app));
      expect(reply.status).toBe(500);
      expect(reply.body.error.code).toBe('body_already_parsed');
      expect(reply.body.error.message).toContain('In Koa, a body parser');
      expect(reply.body.error.message).toContain('before app.use(bodyParser())');
      expect(errors.map((error) => error.code)).toEqual(['body_already_parsed']);
    });
  }

  it('reads the stream a parser that skipped the request left unread behind its empty body', async () => {
    const { receiver, errors } = recordingReceiver();
    const app = new Koa();
    app.use(koaBodyParser({ enableTypes: ['form'] }));
    app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
    expect(await deliver(await serve(app))).toEqual({ status: 200, body: { received: true } });
    expect(errors).toEqual([]);
  });

  it('passes other paths on, and the rest of the app still parses JSON', async () => {
    const { receiver } = recordingReceiver();
    const app = new Koa();
    app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
    app.use(bodyParser());
    app.use((ctx) => {
      ctx.body = { parsed: (ctx.request as { body?: unknown }).body };
    });
    const base = await serve(app);
    const echo = await fetch(`${base}/api/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"hello":"world"}',
    });
    expect(await echo.json()).toEqual({ parsed: { hello: 'world' } });
    expect(await deliver(base)).toEqual({ status: 200, body: { received: true } });
  });

  it('lets earlier middleware see the answer through Koa', async () => {
    const { receiver } = recordingReceiver();
    const app = new Koa();
    const seen: number[] = [];
    app.use(async (ctx, next) => {
      await next();
      seen.push(ctx.status);
      ctx.set('x-app', 'kept');
    });
    app.use(webhookMiddleware(receiver));
    const base = await serve(app);
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(`${base}/anywhere`, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-app')).toBe('kept');
    expect(seen).toEqual([200]);
  });

  it('refuses a missing receiver or a path without a leading slash at mount', () => {
    expect(() => webhookMiddleware(undefined as never)).toThrow(WebhookConfigError);
    expect(() => webhookMiddleware(createReceiver({ secrets: SECRET }), { path: 'webhooks' })).toThrow(
      /starting with "\/"/,
    );
    // Matched as it is, a path with a parameter would pass every request on: refused, pointing to a router.
    expect(() =>
      webhookMiddleware(createReceiver({ secrets: SECRET }), { path: '/webhooks/:account' }),
    ).toThrow(/never match: mount a route with parameters on a router, router\.all\("\/webhooks\/:account"/);
  });
});
