// A webhook receiver on Express 5 with the embedded memory store: `npm run example` at the repository root.
// PORT (default 3000) and WEBHOOK_SECRET (default: a development secret, never for production) configure it.
import express from 'express';
import { createExpressHandler } from 'messaging-webhooks/express';
import { createExampleReceiver, exampleSecret, printHowToSend } from '../example-receiver.mjs';

const secret = exampleSecret();
const receiver = createExampleReceiver(secret);

const app = express();
// Before any JSON body parser: the signature is checked over the raw bytes.
app.post('/webhooks', createExpressHandler(receiver));
app.use(express.json());
app.get('/', (_req, res) => {
  res.json({ webhooks: 'POST /webhooks' });
});

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  printHowToSend(`http://localhost:${server.address().port}/webhooks`, secret);
});

// Stop taking requests, let running handlers finish (their events are then marked processed), then exit.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    process.exit(0);
  });
}
