// A webhook receiver on Express 5 with the embedded memory store: `npm run example` at the repository root.
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import express from 'express';
import { createReceiver } from 'messaging-webhooks';
import { webhookHandler } from 'messaging-webhooks/express';

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

const app = express();
// Before any JSON body parser: the signature is checked over the raw bytes.
app.post('/webhooks', webhookHandler(receiver));
app.use(express.json());
app.get('/', (_req, res) => {
  res.json({ webhooks: 'POST /webhooks' });
});

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  const { port } = server.address();
  const url = `http://localhost:${port}/webhooks`;
  const env = secret === DEV_SECRET ? `WEBHOOK_SECRET=${DEV_SECRET} ` : '';
  console.log(`Receiving webhooks on ${url}`);
  const where = env ? '' : ', with WEBHOOK_SECRET exported in your shell';
  console.log(
    `Send it a signed test event (from this repository, or a project that has messaging-webhooks installed${where}):`,
  );
  console.log(
    `\n  ${env}node --input-type=module -e "import { createEvent, createSignedRequest } from 'messaging-webhooks/testing'; ` +
      `const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: process.env.WEBHOOK_SECRET }); ` +
      `const res = await fetch('${url}', { method: 'POST', headers, body }); console.log(res.status, await res.text());"\n`,
  );
});

// Stop taking requests, let running handlers finish (their events are then marked processed), then exit.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    process.exit(0);
  });
}
