// A webhook receiver on Deno.serve: `npm run example:deno` at the repository root (Deno comes from npm).
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import { createFetchHandler } from 'messaging-webhooks/fetch';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const receiver = createExampleReceiver(secret);
const handleWebhook = createFetchHandler(receiver);

const server = Deno.serve(
  {
    port: Number(Deno.env.get('PORT') ?? 3000),
    onListen: ({ port }) => printHowToSend(`http://localhost:${port}/webhooks`, secret),
  },
  (request) => {
    if (new URL(request.url).pathname === '/webhooks') return handleWebhook(request);
    return Response.json({ webhooks: 'POST /webhooks' }, { status: 404 });
  },
);

for (const signal of ['SIGINT', 'SIGTERM']) {
  Deno.addSignalListener(signal, async () => {
    await server.shutdown();
    await receiver.close({ timeoutMs: 10_000 });
    Deno.exit(0);
  });
}
