// One cold start, in a fresh process started by bench/cold-start.mjs: imports one contender, answers one
// delivery, and prints the two times (ms) as JSON. The delivery's Request is built before the clock starts, so
// Node's own lazy loading of fetch internals is not counted against the package.
const [contender] = process.argv.slice(2);
const { secret, body, signature, webhookHeaders, stripeHeader } = JSON.parse(process.env.COLD_START_INPUT);

const contenders = {
  async 'messaging-webhooks (root + /fetch)'() {
    const request = new Request('https://example.test/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-signature': signature },
      body,
    });
    const started = performance.now();
    const [{ createReceiver }, { createFetchHandler }] = await Promise.all([
      import('../../dist/src/index.js'),
      import('../../dist/adapters/fetch.js'),
    ]);
    const imported = performance.now();
    const receiver = createReceiver({ secrets: secret });
    receiver.on('message.delivered', () => {});
    const response = await createFetchHandler(receiver)(request);
    if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
    await response.text();
    return [imported - started, performance.now() - imported];
  },
  async 'messaging-webhooks (root + /express)'() {
    const started = performance.now();
    const [{ createReceiver }, { webhookHandler }] = await Promise.all([
      import('../../dist/src/index.js'),
      import('../../dist/adapters/express.js'),
    ]);
    const imported = performance.now();
    webhookHandler(createReceiver({ secrets: secret }));
    return [imported - started, Number.NaN];
  },
  async standardwebhooks() {
    const started = performance.now();
    const { Webhook } = await import('standardwebhooks');
    const imported = performance.now();
    const event = new Webhook(secret).verify(body, webhookHeaders);
    if (event.type !== 'message.delivered') throw new Error('standardwebhooks did not verify');
    return [imported - started, performance.now() - imported];
  },
  async 'stripe-node webhooks'() {
    const started = performance.now();
    const { default: Stripe } = await import('stripe');
    const imported = performance.now();
    const event = new Stripe('sk_test_cold_start').webhooks.constructEvent(body, stripeHeader, secret);
    if (event.type !== 'message.delivered') throw new Error('stripe did not verify');
    return [imported - started, performance.now() - imported];
  },
};

const [importMs, firstMs] = await contenders[contender]();
console.log(JSON.stringify({ importMs, firstMs }));
