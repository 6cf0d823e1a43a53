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

/** The Fetch path: createReceiver, one handler, the Fetch adapter, a signed Request answered 200. */
async function fetchPath(load, prepare = async () => {}) {
  await prepare();
  const request = new Request('https://example.test/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-signature': signature },
    body,
  });
  const started = clock();
  const [{ createReceiver }, { createFetchHandler }] = await load();
  const imported = clock();
  const receiver = createReceiver({ secrets: secret });
  receiver.on('message.delivered', async (event) => {
    if (event.data.message_id === '') throw new Error('no message id');
  });
  const response = await createFetchHandler(receiver)(request);
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
  await response.text();
  return [since(started, imported), since(imported, clock())];
}

async function stripePath(load) {
  const started = clock();
  const Stripe = await load();
  const imported = clock();
  const event = new Stripe('sk_test_cold_start').webhooks.constructEvent(body, stripeHeader, secret);
  if (event.type !== 'message.delivered') throw new Error('stripe did not verify');
  return [since(started, imported), since(imported, clock())];
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
  async 'messaging-webhooks (root + /express)'() {
    const started = clock();
    const [{ createReceiver }, { webhookHandler }] = await Promise.all([
      import('../../dist/src/index.js'),
      import('../../dist/adapters/express.js'),
    ]);
    const imported = clock();
    webhookHandler(createReceiver({ secrets: secret }));
    return [since(started, imported), [null, null]];
  },
  /**
   * The package's own share of that import: its dependencies (zod, p-queue) are imported first, untimed, so the
   * clock sees only the package's files, their compilation and their top-level code.
   */
  async 'messaging-webhooks (root + /express), own share'() {
    const entries = ['../../dist/src/index.js', '../../dist/adapters/express.js'];
    await Promise.all((await dependenciesOf(entries)).map((name) => import(name)));
    const started = clock();
    const [{ createReceiver }, { webhookHandler }] = await Promise.all(entries.map((entry) => import(entry)));
    const imported = clock();
    webhookHandler(createReceiver({ secrets: secret }));
    return [since(started, imported), [null, null]];
  },
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
