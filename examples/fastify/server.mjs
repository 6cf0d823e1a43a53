// A webhook receiver on Fastify 5 with the embedded memory store:
// `npm run build && node examples/fastify/server.mjs` at the repository root.
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import Fastify from 'fastify';
import { createFastifyPlugin } from 'messaging-webhooks/fastify';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const receiver = createExampleReceiver(secret);

const app = Fastify();
// The plugin keeps the raw bytes for its own route; every other route still parses JSON.
await app.register(createFastifyPlugin(receiver, { path: '/webhooks' }));
app.get('/', async () => ({ webhooks: 'POST /webhooks' }));

const address = await app.listen({
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? 'localhost',
});
printHowToSend(`${address}/webhooks`, secret);

// app.close() stops taking requests and, through the plugin, waits for running handlers (their events are then
// marked processed) before it resolves.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.close();
    process.exit(0);
  });
}
