// An app on Express 4 and Fastify 4 that installed the package from its tarball with a plain `npm install`:
// one signed delivery through each, over a real socket. Prints one JSON line with what each answered.
import express from 'express';
import Fastify from 'fastify';
import { createReceiver } from 'messaging-webhooks';
import { webhookHandler } from 'messaging-webhooks/express';
import { webhooks } from 'messaging-webhooks/fastify';
import { createEvent, createSignedRequest } from 'messaging-webhooks/testing';

const secret = 'whsec_consumer_older_majors';

async function deliver(url) {
  const signed = createSignedRequest(createEvent('message.delivered'), { secret });
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: response.status, body: await response.json() };
}

const app = express();
app.post('/webhooks', webhookHandler(createReceiver({ secrets: secret })));
app.use(express.json());
const server = await new Promise((resolve) => {
  const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
});
const onExpress = await deliver(`http://127.0.0.1:${server.address().port}/webhooks`);
server.close();

const fastify = Fastify();
await fastify.register(webhooks, { receiver: createReceiver({ secrets: secret }), path: '/webhooks' });
const base = await fastify.listen({ port: 0, host: '127.0.0.1' });
const onFastify = await deliver(`${base}/webhooks`);
await fastify.close();

const { version: expressVersion } = (await import('express/package.json', { with: { type: 'json' } }))
  .default;
const { version: fastifyVersion } = (await import('fastify/package.json', { with: { type: 'json' } }))
  .default;
console.log(JSON.stringify({ expressVersion, fastifyVersion, onExpress, onFastify }));
