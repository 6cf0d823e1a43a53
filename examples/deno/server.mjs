// A webhook receiver on Deno.serve: `npm run example:deno` at the repository root (Deno comes from npm).
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
// Its dedupe store is Deno KV (`--unstable-kv` outside Deno Deploy): on Deno Deploy the app's own database,
// shared by every instance; here a local file in Deno's data directory.
import { DenoKvDedupeStore } from 'messaging-webhooks/deno-kv';
import { createFetchHandler } from 'messaging-webhooks/fetch';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const kv = await Deno.openKv();
const receiver = createExampleReceiver(secret, { store: new DenoKvDedupeStore({ kv }) });
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
    kv.close();
    Deno.exit(0);
  });
}
