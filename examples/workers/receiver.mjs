// The web tier: verifies each delivery and answers 202 once the job engine holds its event.
// `node examples/workers/receiver.mjs` (after `npm run build`); PORT (default 3000), WEBHOOK_SECRET, ENGINE,
// REDIS_URL / DATABASE_URL, QUEUE configure it. Start workers with examples/workers/worker.mjs.
import { createServer } from 'node:http';
import { createNodeHandler } from 'messaging-webhooks/node';
import { printHowToSend } from '../example-receiver.mjs';
import { queue, receiver, secret } from './queue.mjs';

// Before saying it receives: a queue its engine refuses (a Redis that can lose jobs) would answer every delivery
// 503, so the receiver says why and stops instead.
try {
  await queue.ready();
} catch (error) {
  console.error(`The durable queue cannot take events: ${error.message}`);
  process.exit(1);
}

const server = createServer(createNodeHandler(receiver));
server.listen(Number(process.env.PORT ?? 3000), () => {
  printHowToSend(`http://localhost:${server.address().port}/webhooks`, secret);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    await queue.close();
    process.exit(0);
  });
}
