// One cold start, in a fresh process started by bench/cold-start.mjs: imports one contender, answers one
// delivery, and prints the two times (ms, wall and this process's CPU) as JSON. The delivery's Request is built before the clock starts, so
// Node's own lazy loading of fetch internals is not counted against the package.
const [contender] = process.argv.slice(2);
/** Wall and CPU (user + system) milliseconds since the process started. */
const clock = () => {
  const { user, system } = process.cpuUsage();
  return [performance.now(), (user + system) / 1000];
};
const since = (from, to) => [to[0] - from[0], to[1] - from[1]];
const { secret, body, signature, webhookHeaders, stripeHeader } = JSON.parse(process.env.COLD_START_INPUT);

/**
 * The Fetch path: createReceiver, one handler, the Fetch adapter, a signed Request answered 200 (`route` makes
 * the handler in their place, with nothing imported).
 */
async function fetchPath(load, prepare = async () => {}, route) {
  await prepare();
  const request = new Request('https://example.test/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-signature': signature },
    body,
  });
  const started = clock();
  const [index, adapter] = route ? [] : await load();
  const imported = clock();
  let handle = await route?.();
  if (!handle) {
    const receiver = index.createReceiver({ secrets: secret });
    receiver.on('message.delivered', async (event) => {
      if (event.data.message_id === '') throw new Error('no message id');
    });
    handle = adapter.createFetchHandler(receiver);
  }
  const response = await handle(request);
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
  await response.text();
  return [route ? [null, null] : since(started, imported), since(imported, clock())];
}

async function stripePath(load) {
  const started = clock();
  const Stripe = await load();
  const imported = clock();
  const event = new Stripe('sk_test_cold_start').webhooks.constructEvent(body, stripeHeader, secret);
  if (event.type !== 'message.delivered') throw new Error('stripe did not verify');
  return [since(started, imported), since(imported, clock())];
}

const EXPRESS_ENTRIES = ['../../dist/src/index.js', '../../dist/adapters/express.js'];

/**
 * The README's Express app answering one signed delivery over a real socket (Node's own IncomingMessage and
 * ServerResponse, an http.request client in this process). Before the clock: Express imported, the app listening
 * and one GET of another path answered (404), so Node's HTTP server and client and Express's router have run
 * once, as in an app a health check reached before its first delivery. Timed: the import of `entries`, then
 * createReceiver with the README's handler, the route and the delivery's answer (`route` stands in for the
 * three when `entries` is empty).
 */
async function expressPath(entries, prepare = async () => {}, route) {
  const [{ default: express }, http] = await Promise.all([import('express'), import('node:http')]);
  await prepare();
  const app = express();
  const server = http.createServer(app);
  await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
  const send = (method, headers, payload) =>
    new Promise((answered, failed) => {
      const request = http.request(
        { host: '127.0.0.1', port: server.address().port, path: '/webhooks', method, headers },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => answered([response.statusCode, Buffer.concat(chunks).toString()]));
        },
      );
      request.on('error', failed);
      request.end(payload);
    });
  await send('GET', {});
  const delivery = { 'content-type': 'application/json', 'webhook-signature': signature };
  const started = clock();
  const [index, adapter] = await Promise.all(entries.map((entry) => import(entry)));
  const imported = clock();
  if (route) await route(app);
  else {
    const receiver = index.createReceiver({ secrets: secret });
    receiver.on('message.delivered', async (event) => {
      if (event.data.message_id === '') throw new Error('no message id');
    });
    app.post('/webhooks', adapter.createExpressHandler(receiver));
  }
  const [status, text] = await send('POST', delivery, body);
  const answered = clock();
  server.close();
  if (status !== 200) throw new Error(`answered ${status}: ${text}`);
  return [entries.length === 0 ? [null, null] : since(started, imported), since(imported, answered)];
}

/** One file bundled by bench/cold-start.mjs (esbuild, every dependency inlined), by its name. */
const bundle = (name) => import(new URL(`${name}.mjs`, `file://${process.env.COLD_START_BUNDLES}/`).href);

/**
 * The packages the built files reached from `entries` import (zod, p-queue, …), read from the import statements
 * of dist/ itself, so the list follows the build.
 */
async function dependenciesOf(entries) {
  const { readFileSync } = await import('node:fs');
  const seen = new Set();
  const packages = new Set();
  const visit = (url) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    const text = readFileSync(url, 'utf8');
    const statements =
      /(?:^|\n)\s*(?:import\s*['"]([^'"]+)['"]|(?:import|export)\s[^;'"]*?\bfrom\s*['"]([^'"]+)['"])/g;
    for (const [, bare, from] of text.matchAll(statements)) {
      const specifier = bare ?? from;
      if (specifier.startsWith('.')) visit(new URL(specifier, url));
      else if (!specifier.startsWith('node:')) packages.add(specifier);
    }
  };
  for (const entry of entries) visit(new URL(entry, import.meta.url));
  return [...packages];
}

const contenders = {
  'messaging-webhooks (root + /fetch)': () =>
    fetchPath(() => Promise.all([import('../../dist/src/index.js'), import('../../dist/adapters/fetch.js')])),
  'messaging-webhooks, esbuild bundle': () =>
    fetchPath(async () => {
      const all = await bundle('messaging-webhooks');
      return [all, all];
    }),
  'messaging-webhooks (root + /express)': () => expressPath(EXPRESS_ENTRIES),
  /**
   * The package's own share of that import: its dependencies (zod, p-queue) are imported first, untimed, so the
   * clock sees only the package's files, their compilation and their top-level code.
   */
  'messaging-webhooks (root + /express), own share': () =>
    expressPath(EXPRESS_ENTRIES, async () => {
      await Promise.all((await dependenciesOf(EXPRESS_ENTRIES)).map((name) => import(name)));
    }),
  /**
   * What Express and Node's HTTP server and client cost in the same first answer without the package: the route
   * a user writes with nothing but node:crypto (the body read from the request stream, as the adapter reads it,
   * an HMAC compared in constant time, JSON.parse, the handler, res.json). The Express rows' first answer less this one is the package's own share of it.
   */
  'express hand route (node:crypto, no package)': () =>
    expressPath([], undefined, async (app) => {
      const { createHmac, timingSafeEqual } = await import('node:crypto');
      const onEvent = async (event) => {
        if (event.data.message_id === '') throw new Error('no message id');
      };
      app.post('/webhooks', async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        req.body = Buffer.concat(chunks);
        const [stamp, sent] = String(req.headers['webhook-signature']).split(',');
        const timestamp = stamp.slice('t='.length);
        const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(req.body).digest();
        const given = Buffer.from(sent.slice('v1='.length), 'hex');
        if (given.length !== expected.length || !timingSafeEqual(given, expected))
          return res.status(401).json({ error: 'invalid signature' });
        await onEvent(JSON.parse(req.body.toString('utf8')));
        res.json({ received: true });
      });
    }),
  /**
   * The Fetch path's floor: the same Request answered with node:crypto alone and no package (the body read whole,
   * an HMAC compared in constant time, JSON.parse, the handler, Response.json). The /fetch row's first answer less
   * this one is the package's own share of it.
   */
  'fetch hand route (node:crypto, no package)': () =>
    fetchPath(undefined, undefined, async () => {
      const { createHmac, timingSafeEqual } = await import('node:crypto');
      const onEvent = async (event) => {
        if (event.data.message_id === '') throw new Error('no message id');
      };
      return async (request) => {
        const raw = Buffer.from(await request.arrayBuffer());
        const [stamp, sent] = String(request.headers.get('webhook-signature')).split(',');
        const timestamp = stamp.slice('t='.length);
        const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
        const given = Buffer.from(sent.slice('v1='.length), 'hex');
        if (given.length !== expected.length || !timingSafeEqual(given, expected))
          return Response.json({ error: 'invalid signature' }, { status: 401 });
        await onEvent(JSON.parse(raw.toString('utf8')));
        return Response.json({ received: true });
      };
    }),
  /** The same for the root entry and the Fetch adapter, then the first delivery as above. */
  'messaging-webhooks (root + /fetch), own share': () =>
    fetchPath(
      () => Promise.all([import('../../dist/src/index.js'), import('../../dist/adapters/fetch.js')]),
      async () => {
        const entries = ['../../dist/src/index.js', '../../dist/adapters/fetch.js'];
        await Promise.all((await dependenciesOf(entries)).map((name) => import(name)));
      },
    ),
  async standardwebhooks() {
    const started = clock();
    const { Webhook } = await import('standardwebhooks');
    const imported = clock();
    const event = new Webhook(secret).verify(body, webhookHeaders);
    if (event.type !== 'message.delivered') throw new Error('standardwebhooks did not verify');
    return [since(started, imported), since(imported, clock())];
  },
  'stripe-node webhooks': () => stripePath(async () => (await import('stripe')).default),
  'stripe-node webhooks, esbuild bundle': () => stripePath(async () => (await bundle('stripe')).default),
  /** What the package's schemas cost before any of its own code: zod/mini and the zod core it loads. */
  async 'zod/mini alone'() {
    const started = clock();
    await import('zod/mini');
    return [since(started, clock()), [null, null]];
  },
};

const [[importMs, importCpuMs], [firstMs, firstCpuMs]] = await contenders[contender]();
console.log(JSON.stringify({ importMs, importCpuMs, firstMs, firstCpuMs }));
