import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import webhooks, { webhooks as namedWebhooks } from '../../adapters/fastify.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';
import { type ConformanceServer, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ port: 0, host: '127.0.0.1' });
}

function connectionRefused(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

runConformanceSuite('fastify', async (profile): Promise<ConformanceServer> => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const app = Fastify();
  await app.register(webhooks, { receiver, path: '/webhooks/:account' });
  const base = await listen(app);
  return { url: `${base}/webhooks/${ACCOUNT}`, handled: async () => handled, close: () => app.close() };
});

describe('fastify plugin', () => {
  const apps: FastifyInstance[] = [];
  const track = (app: FastifyInstance) => {
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('is the same plugin as default and named export', () => {
    expect(namedWebhooks).toBe(webhooks);
  });

  it('leaves JSON parsing of the other routes alone, before and after registration', async () => {
    const { receiver, handled } = createConformanceReceiver();
    const app = track(Fastify());
    app.post('/before', async (request) => ({ parsed: request.body }));
    await app.register(webhooks, { receiver, path: '/webhooks' });
    app.post('/after', async (request) => ({ parsed: request.body }));
    await app.register(async (scope) => {
      scope.post('/nested', async (request) => ({ parsed: request.body }));
    });
    const base = await listen(app);
    for (const route of ['/before', '/after', '/nested']) {
      const response = await fetch(`${base}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"hello":"world"}',
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ parsed: { hello: 'world' } });
    }
    // A content type the app has no parser for is still refused by Fastify outside the webhook route.
    const plain = await fetch(`${base}/after`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-custom' },
      body: 'x',
    });
    expect(plain.status).toBe(415);
    // …while the webhook route still gets the raw bytes.
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET });
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(response.status).toBe(200);
    expect(handled.map((seen) => seen.id)).toEqual([event.id]);
  });

  it('keeps errors of other kinds for the app: a failing hook still reaches its error handler', async () => {
    const { receiver } = createConformanceReceiver();
    const app = track(Fastify());
    app.setErrorHandler(async (_error, _request, reply) => reply.code(418).send({ app: 'handled' }));
    app.addHook('preHandler', async (request) => {
      if (request.headers['x-fail'] === '1') throw new Error('hook failure');
    });
    await app.register(webhooks, { receiver, path: '/webhooks' });
    const base = await listen(app);
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: { ...signed.headers, 'x-fail': '1' },
      body: signed.body,
    });
    expect(response.status).toBe(418);
    expect(await response.json()).toEqual({ app: 'handled' });
  });

  // The route is a callback-style handler; what an async one got from Fastify (a failure answered through the
  // error handlers) must still hold, for a receiver some wrapper made fail.
  it("hands a failing receiver's error to the app's error handler, and answers the next request", async () => {
    const { receiver } = createConformanceReceiver();
    let fail = true;
    const wrapped: typeof receiver = Object.create(receiver);
    wrapped.receive = (request) =>
      fail ? Promise.reject(new Error('wrapper broke')) : receiver.receive(request);
    const app = track(Fastify());
    app.setErrorHandler(async (error, _request, reply) =>
      reply.code(418).send({ app: (error as Error).message }),
    );
    await app.register(webhooks, { receiver: wrapped, path: '/webhooks' });
    const base = await listen(app);
    const post = () => {
      const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
      return fetch(`${base}/webhooks`, { method: 'POST', headers: signed.headers, body: signed.body });
    };
    const failed = await post();
    expect(failed.status).toBe(418);
    expect(await failed.json()).toEqual({ app: 'wrapper broke' });
    fail = false;
    expect((await post()).status).toBe(200);
  });

  it('hands a Content-Type that Fastify itself refuses to the receiver, which answers 415', async () => {
    const { receiver } = createConformanceReceiver();
    const app = track(Fastify());
    await app.register(webhooks, { receiver, path: '/webhooks' });
    const base = await listen(app);
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: { ...signed.headers, 'content-type': 'json' },
      body: signed.body,
    });
    expect(response.status).toBe(415);
    const { error } = (await response.json()) as { error: { code: string; request_id: string } };
    expect(error.code).toBe('unsupported_media_type');
    expect(response.headers.get('x-request-id')).toBe(error.request_id);
  });

  it('follows the receiver maxBodyBytes as route bodyLimit, whatever the app bodyLimit', async () => {
    const receiver = createReceiver({ secrets: SECRET, maxBodyBytes: 2048 });
    const app = track(Fastify({ bodyLimit: 100 }));
    await app.register(webhooks, { receiver, path: '/webhooks' });
    const base = await listen(app);
    // ~1.5 KiB: over the app limit, under the receiver's; the signature check runs (no 413).
    const event = createEvent('message.delivered', { data: { operator: 'x'.repeat(1400) } });
    const signed = createSignedRequest(event, { secret: SECRET });
    expect(signed.body.length).toBeGreaterThan(1024);
    const ok = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(ok.status).toBe(200);
    const big = createSignedRequest(
      createEvent('message.delivered', { data: { operator: 'x'.repeat(3000) } }),
      {
        secret: SECRET,
      },
    );
    const tooLarge = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: big.headers,
      body: big.body,
    });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });

  it('makes fastify.close() wait for a handler in flight', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const running = gate();
    const release = gate();
    const handled: Array<string | undefined> = [];
    receiver.on('message.delivered', async (event) => {
      running.open();
      await release.opened;
      handled.push(event.id);
    });
    const app = Fastify();
    await app.register(webhooks, { receiver, path: '/webhooks' });
    const base = await listen(app);
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET });
    const delivery = fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    await running.opened;
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    // close() has begun (the server refuses new connections) and still waits on the held handler.
    await until(() => connectionRefused(new URL(base)));
    expect(closed).toBe(false);
    release.open();
    await closing;
    expect(handled).toEqual([event.id]);
    // The delivery was answered, not cut off.
    const response = await delivery;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"received":true}');
  });

  it('gives up waiting after closeTimeoutMs for handlers that do not finish (ack: async)', async () => {
    const receiver = createReceiver({ secrets: SECRET, ack: 'async' });
    const started = gate();
    receiver.on('message.delivered', async () => {
      started.open();
      await new Promise(() => {}); // never settles
    });
    const app = Fastify();
    await app.register(webhooks, { receiver, path: '/webhooks', closeTimeoutMs: 200 });
    const base = await listen(app);
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(response.status).toBe(202);
    await response.text();
    await started.opened;
    const startedAt = Date.now();
    await app.close();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(150);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it('can mount two receivers on two paths of one app', async () => {
    const first = createConformanceReceiver();
    const second = createConformanceReceiver();
    const app = track(Fastify());
    await app.register(webhooks, { receiver: first.receiver, path: '/hooks/a' });
    await app.register(webhooks, { receiver: second.receiver, path: '/hooks/b' });
    const base = await listen(app);
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET });
    const response = await fetch(`${base}/hooks/b`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(response.status).toBe(200);
    expect(first.handled).toEqual([]);
    expect(second.handled.map((seen) => seen.id)).toEqual([event.id]);
  });

  describe('option validation at registration', () => {
    const { receiver } = createConformanceReceiver();
    const cases: Array<[string, unknown, RegExp]> = [
      ['no options', undefined, /needs a receiver \(createReceiver from messaging-webhooks\); got none/],
      ['no receiver', { path: '/webhooks' }, /needs a receiver .*; got none/],
      ['not a receiver', { receiver: {}, path: '/webhooks' }, /needs a receiver .*; got something else/],
      ['no path', { receiver }, /needs the route path as a string starting with "\/", got none/],
      ['a relative path', { receiver, path: 'webhooks' }, /starting with "\/", got "webhooks"/],
      ['a path of another type', { receiver, path: 42 }, /starting with "\/", got 42/],
    ];
    const registrationError = async (options: unknown) => {
      const app = Fastify();
      // biome-ignore lint/suspicious/noExplicitAny: invalid options on purpose
      app.register(webhooks, options as any);
      const error = await app.ready().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      await app.close();
      expect(error).toBeInstanceOf(WebhookConfigError);
      return (error as Error).message;
    };
    for (const [title, options, message] of cases) {
      it(`refuses ${title} with a message that shows the usage`, async () => {
        const text = await registrationError(options);
        expect(text).toMatch(message);
        expect(text).toContain(
          "app.register(webhooks, { receiver: createReceiver({ secrets }), path: '/webhooks' })",
        );
      });
    }
    it('refuses a closeTimeoutMs that is not a number of milliseconds', async () => {
      expect(await registrationError({ receiver, path: '/webhooks', closeTimeoutMs: -1 })).toMatch(
        /closeTimeoutMs must be a number of milliseconds \(0 or more\), got -1/,
      );
    });
  });
});
