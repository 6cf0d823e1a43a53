// The contenders of bench/http.mjs for the newer adapters: each adapter as its guide mounts it, beside the route a
// user of that framework writes by hand with the same guarantees (bench/hand-route.mjs on the framework's raw body;
// the hand routes' body deadline is the Node server's requestTimeout, as for Express). Loaded in the server
// process only.
import { handRoute } from './hand-route.mjs';

/** `benchReceiver` and `countDelivered` are bench/http.mjs's, so every adapter gets the same receiver and handler. */
export function frameworkContenders({ secret, path, bodyTimeoutMs, benchReceiver, countDelivered }) {
  return {
    'koa adapter': async () => {
      const { default: Koa } = await import('koa');
      const { webhookMiddleware } = await import('messaging-webhooks/koa');
      const { receiver, stats } = await benchReceiver();
      const app = new Koa();
      app.use(webhookMiddleware(receiver, { path }));
      return { listen: () => listenNode(app.callback()), stats };
    },
    // Koa has no raw-body reader of its own: a user reads the stream (with a size limit, as the adapter has).
    'koa hand route (same guarantees)': async () => {
      const { default: Koa } = await import('koa');
      const stats = { processed: 0 };
      const receive = handRoute(secret, countDelivered(stats));
      const app = new Koa();
      app.use(async (ctx, next) => {
        if (ctx.path !== path || ctx.method !== 'POST') return next();
        const answer = await receive(await readLimited(ctx.req), ctx.get('webhook-signature'));
        ctx.status = answer.status;
        ctx.body = answer.body;
      });
      return { listen: () => listenNode(app.callback(), bodyTimeoutMs), stats };
    },
    // NestJS on its Express platform, created with { rawBody: true } as docs/frameworks.md says.
    'nestjs adapter': async () => {
      const { receiver, stats } = await benchReceiver();
      const { WebhooksModule } = await import('messaging-webhooks/nestjs');
      const { Module } = await import('@nestjs/common');
      class AppModule {}
      Module({ imports: [WebhooksModule.forRoot({ receiver, path: path })] })(AppModule);
      return { listen: () => listenNest(AppModule), stats };
    },
    'nestjs hand route (same guarantees)': async () => {
      const { Controller, Module, Post, Req, Res } = await import('@nestjs/common');
      const stats = { processed: 0 };
      const receive = handRoute(secret, countDelivered(stats));
      // What `@Controller() class { @Post(path) handle(@Req() req, @Res() res) }` compiles to.
      class WebhookController {
        async handle(req, res) {
          const answer = await receive(req.rawBody, req.headers['webhook-signature']);
          res.status(answer.status).json(answer.body);
        }
      }
      Req()(WebhookController.prototype, 'handle', 0);
      Res()(WebhookController.prototype, 'handle', 1);
      const method = Object.getOwnPropertyDescriptor(WebhookController.prototype, 'handle');
      Post(path)(WebhookController.prototype, 'handle', method);
      Controller()(WebhookController);
      class AppModule {}
      Module({ controllers: [WebhookController] })(AppModule);
      return { listen: () => listenNest(AppModule, bodyTimeoutMs), stats };
    },
    // h3 2 served by its own Node listener; the adapter is the Fetch handler given event.req (docs/fetch-frameworks.md).
    'h3 adapter (fetch handler)': async () => {
      const { H3, toNodeHandler } = await import('h3');
      const { createFetchHandler } = await import('messaging-webhooks/fetch');
      const { receiver, stats } = await benchReceiver();
      const handle = createFetchHandler(receiver);
      const app = new H3().all(path, (event) => handle(event.req));
      return { listen: () => listenNode(toNodeHandler(app)), stats };
    },
    // h3's own body limit (bodyLimit), at the adapters' default 1 MiB.
    'h3 hand route (same guarantees)': async () => {
      const { H3, bodyLimit, toNodeHandler } = await import('h3');
      const stats = { processed: 0 };
      const receive = handRoute(secret, countDelivered(stats));
      const app = new H3().post(
        path,
        async (event) => {
          const rawBody = Buffer.from(await event.req.arrayBuffer());
          const answer = await receive(rawBody, event.req.headers.get('webhook-signature'));
          return Response.json(answer.body, { status: answer.status });
        },
        { middleware: [bodyLimit(MAX_BODY_BYTES)] },
      );
      return { listen: () => listenNode(toNodeHandler(app), bodyTimeoutMs), stats };
    },
    'hono adapter (fetch handler)': async () => {
      const { Hono } = await import('hono');
      const { createFetchHandler } = await import('messaging-webhooks/fetch');
      const { receiver, stats } = await benchReceiver();
      const handle = createFetchHandler(receiver);
      const app = new Hono().all(path, (c) => handle(c.req.raw));
      return { listen: () => listenHono(app), stats };
    },
    // Hono's own body limit (hono/body-limit), at the adapters' default 1 MiB.
    'hono hand route (same guarantees)': async () => {
      const { Hono } = await import('hono');
      const { bodyLimit } = await import('hono/body-limit');
      const stats = { processed: 0 };
      const receive = handRoute(secret, countDelivered(stats));
      const app = new Hono().post(path, bodyLimit({ maxSize: MAX_BODY_BYTES }), async (c) => {
        const rawBody = Buffer.from(await c.req.arrayBuffer());
        const answer = await receive(rawBody, c.req.header('webhook-signature'));
        return c.json(answer.body, answer.status);
      });
      return { listen: () => listenHono(app, bodyTimeoutMs), stats };
    },
    // The core given Hono's own body reader instead of the Web Request: what the Fetch adapter's cost in Hono is.
    'hono + receiver.receive by hand': async () => {
      const { Hono } = await import('hono');
      const { receiver, stats } = await benchReceiver();
      const app = new Hono().post(path, async (c) => {
        const rawBody = new Uint8Array(await c.req.arrayBuffer());
        const outcome = await receiver.receive({ method: 'POST', headers: c.req.header(), rawBody });
        return c.body(outcome.body, outcome.status, outcome.headers);
      });
      return { listen: () => listenHono(app), stats };
    },
    // Google Cloud Functions: the Functions Framework (Express underneath) keeps req.rawBody for both routes.
    'gcf adapter': async () => {
      const { createCloudFunction } = await import('messaging-webhooks/google-cloud-functions');
      const { receiver, stats } = await benchReceiver();
      return { listen: () => listenCloudFunction(createCloudFunction(receiver)), stats };
    },
    'gcf hand route (same guarantees)': async () => {
      const stats = { processed: 0 };
      const receive = handRoute(secret, countDelivered(stats));
      const fn = async (req, res) => {
        if (req.method !== 'POST') return void res.status(405).end();
        const answer = await receive(req.rawBody, req.headers['webhook-signature']);
        res.status(answer.status).json(answer.body);
      };
      return { listen: () => listenCloudFunction(fn, bodyTimeoutMs), stats };
    },
  };
}

/** The receiver's default maxBodyBytes: the hand routes refuse bodies past the same size. */
const MAX_BODY_BYTES = 1024 * 1024;

/** A Node request listener on a loopback port of its own; `requestTimeout` is the hand routes' body deadline. */
async function listenNode(listener, requestTimeout) {
  const { createServer } = await import('node:http');
  const server = createServer(listener);
  if (requestTimeout !== undefined) server.requestTimeout = requestTimeout;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

async function listenNest(AppModule, requestTimeout) {
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const app = await NestFactory.create(AppModule, { rawBody: true, logger: false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer();
  if (requestTimeout !== undefined) server.requestTimeout = requestTimeout;
  return `http://127.0.0.1:${server.address().port}`;
}

async function listenHono(app, requestTimeout) {
  const { serve } = await import('@hono/node-server');
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(`http://127.0.0.1:${info.port}`),
    );
    if (requestTimeout !== undefined) server.requestTimeout = requestTimeout;
  });
}

async function listenCloudFunction(fn, requestTimeout) {
  const functions = await import('@google-cloud/functions-framework');
  const { getTestServer } = await import('@google-cloud/functions-framework/testing');
  functions.http('webhooks', fn);
  const server = getTestServer('webhooks');
  if (requestTimeout !== undefined) server.requestTimeout = requestTimeout;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

/** The raw body as a hand route on a bare Node request reads it, refusing past the adapters' default 1 MiB. */
async function readLimited(request, limit = MAX_BODY_BYTES) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > limit) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
