// A webhook receiver on Fastify 5 with the embedded memory store:
// `npm run build && node examples/fastify/server.mjs` at the repository root.
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import Fastify from 'fastify';
import { createReceiver } from 'messaging-webhooks';
import webhooks from 'messaging-webhooks/fastify';

const DEV_SECRET = 'whsec_dev_only_not_for_production';
const secret = process.env.WEBHOOK_SECRET || DEV_SECRET;
if (secret === DEV_SECRET) {
  console.warn(
    `WARNING: WEBHOOK_SECRET is not set; using the development secret ${DEV_SECRET}. Never use it in production.`,
  );
}

const receiver = createReceiver({ secrets: secret });
receiver.on('message.delivered', (event, ctx) => {
  console.log(
    `[${ctx.requestId}] ${event.type} ${event.id ?? '(no id)'}: ${event.data.message_id} delivered to ${event.data.to} by ${event.data.operator} (${ctx.mode})`,
  );
});
receiver.on('message.failed', (event, ctx) => {
  console.log(
    `[${ctx.requestId}] ${event.type} ${event.id ?? '(no id)'}: ${event.data.message_id ?? 'unknown message'} failed (${ctx.mode})`,
  );
});
receiver.onError((error, ctx) => {
  console.error(`[${ctx.requestId}] ${error.code}: ${error.message}`);
});

const app = Fastify();
// The plugin keeps the raw bytes for its own route; every other route still parses JSON.
await app.register(webhooks, { receiver, path: '/webhooks' });
app.get('/', async () => ({ webhooks: 'POST /webhooks' }));

const address = await app.listen({
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? 'localhost',
});
const url = `${address}/webhooks`;
const env = secret === DEV_SECRET ? `WEBHOOK_SECRET=${DEV_SECRET} ` : '';
console.log(`Receiving webhooks on ${url}`);
console.log(
  `Send it a signed test event (from this repository, or a project that has messaging-webhooks installed${env ? '' : ', with WEBHOOK_SECRET exported in your shell'}):`,
);
console.log(
  `\n  ${env}node --input-type=module -e "import { createEvent, createSignedRequest } from 'messaging-webhooks/testing'; ` +
    `const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: process.env.WEBHOOK_SECRET }); ` +
    `const res = await fetch('${url}', { method: 'POST', headers, body }); console.log(res.status, await res.text());"\n`,
);

// app.close() stops taking requests and, through the plugin, waits for running handlers (their events are then
// marked processed) before it resolves.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.close();
    process.exit(0);
  });
}
