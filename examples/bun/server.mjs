// A webhook receiver on Bun's own server: `npm run example:bun` at the repository root (Bun comes from npm).
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import { createFetchHandler } from 'messaging-webhooks/fetch';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const receiver = createExampleReceiver(secret);
const handleWebhook = createFetchHandler(receiver);

const server = Bun.serve({
  port: Number(process.env.PORT ?? 3000),
  fetch(request, bunServer) {
    if (new URL(request.url).pathname === '/webhooks') return handleWebhook(request, bunServer);
    return Response.json({ webhooks: 'POST /webhooks' }, { status: 404 });
  },
});
printHowToSend(`http://localhost:${server.port}/webhooks`, secret);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop();
    await receiver.close({ timeoutMs: 10_000 });
    process.exit(0);
  });
}
