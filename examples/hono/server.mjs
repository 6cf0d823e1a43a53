// A webhook receiver on Hono, served on Node by @hono/node-server: `npm run example:hono` at the repository root.
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createFetchHandler } from 'messaging-webhooks/fetch';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const receiver = createExampleReceiver(secret);
const handleWebhook = createFetchHandler(receiver);

const app = new Hono();
// The untouched Request goes to the handler: it reads the raw bytes itself. app.all, so other methods get its 405.
app.all('/webhooks', (c) => handleWebhook(c.req.raw));
app.get('/', (c) => c.json({ webhooks: 'POST /webhooks' }));

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  printHowToSend(`http://localhost:${info.port}/webhooks`, secret);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    process.exit(0);
  });
}
