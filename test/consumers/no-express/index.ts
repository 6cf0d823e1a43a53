// A Fastify and Fetch app: it never installed express nor @types/express.
import Fastify from 'fastify';
import { createReceiver, type WebhookHandlerError } from 'messaging-webhooks';
import webhooks from 'messaging-webhooks/fastify';
import { createFetchHandler, type FetchHandler } from 'messaging-webhooks/fetch';

const receiver = createReceiver({ secrets: 'whsec_consumer_no_express' });
receiver.on('message.delivered', (event) => {
  const messageId: string = event.data.message_id;
  return void messageId;
});
receiver.onError((error: WebhookHandlerError) => void error.code);

const app = Fastify();
await app.register(webhooks, { receiver, path: '/webhooks' });

const handler: FetchHandler = createFetchHandler(() => receiver);

export { app, handler };
