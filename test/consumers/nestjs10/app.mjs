// An app on NestJS 10 (Express platform) that installed the package from its tarball with a plain `npm install`:
// one signed delivery to an app made with rawBody: true, handled by an @OnWebhook method, and one to an app that
// kept no raw body. Decorators are applied as calls: the file runs as it is, untranspiled.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createReceiver } from 'messaging-webhooks';
import { OnWebhook, WebhooksModule } from 'messaging-webhooks/nestjs';
import { createEvent, createSignedRequest } from 'messaging-webhooks/testing';

const secret = 'whsec_consumer_nestjs10';

class Deliveries {
  delivered = [];
  onDelivered(event) {
    this.delivered.push(event.data.message_id);
  }
}
Injectable()(Deliveries);
const method = Object.getOwnPropertyDescriptor(Deliveries.prototype, 'onDelivered');
OnWebhook('message.delivered')(Deliveries.prototype, 'onDelivered', method);

async function deliver(options) {
  class AppModule {}
  Module({
    imports: [WebhooksModule.forRoot({ receiver: createReceiver({ secrets: secret }) })],
    providers: [Deliveries],
  })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false, ...options });
  await app.listen(0, '127.0.0.1');
  const event = createEvent('message.delivered');
  const signed = createSignedRequest(event, { secret });
  const response = await fetch(`${await app.getUrl()}/webhooks`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
  });
  const answer = { status: response.status, body: await response.json() };
  const handled = app.get(Deliveries).delivered.includes(event.data.message_id);
  await app.close();
  return { ...answer, handled };
}

const withRawBody = await deliver({ rawBody: true });
const withoutRawBody = await deliver({});
const { version: nestVersion } = (await import('@nestjs/core/package.json', { with: { type: 'json' } }))
  .default;
console.log(JSON.stringify({ nestVersion, withRawBody, withoutRawBody }));
