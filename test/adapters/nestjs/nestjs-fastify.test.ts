import type { Server } from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { OnWebhook, type WebhookEvent, WebhooksModule } from '../../../adapters/nestjs.js';
import { createReceiver, type SignatureProfile } from '../../../src/index.js';
import { createEvent, createSignedRequest } from '../../../src/testing.js';
import { listen } from '../../support/http.js';
import { runConformanceSuite } from '../conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from '../conformance-receiver.js';

@Injectable()
class DeliveryLog {
  readonly delivered: string[] = [];

  @OnWebhook('message.delivered')
  onDelivered(event: WebhookEvent<'message.delivered'>): void {
    this.delivered.push(event.data.message_id);
  }
}

/** A Nest application on the Fastify platform whose root module imports the webhooks module. */
async function startFastifyApp(
  receiver: ReturnType<typeof createReceiver>,
  rawBody: boolean,
  path = '/webhooks',
) {
  @Module({ imports: [WebhooksModule.forRoot({ receiver, path })], providers: [DeliveryLog] })
  class AppModule {}
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
    rawBody,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const origin = await listen(app.getHttpServer() as Server);
  return { app, origin };
}

// Fastify answers what it cannot parse (another content type, invalid JSON, a compressed body: 400) before any
// route runs, and reads a body whole under its own bodyLimit before the route sees it: the receiver's early 413
// cannot happen.
runConformanceSuite(
  'nestjs 11 on fastify, rawBody: true',
  async (profile: SignatureProfile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const { app, origin } = await startFastifyApp(receiver, true, '/webhooks/:account');
    return { url: `${origin}/webhooks/${ACCOUNT}`, handled: async () => handled, close: () => app.close() };
  },
  {
    skip: [
      'unsupported_media_type',
      'compressed_body',
      'invalid_json',
      'payload_too_large_declared',
      'payload_too_large_chunked',
    ],
  },
);

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('WebhooksModule on NestJS 11 (Fastify platform)', () => {
  it('registers @OnWebhook methods, and answers body_already_parsed naming rawBody: true without it', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const { app, origin } = await startFastifyApp(receiver, false);
    close = () => app.close();
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const reply = await fetch(`${origin}/webhooks`, { method: 'POST', headers, body });
    expect(reply.status).toBe(500);
    const { error } = (await reply.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('body_already_parsed');
    expect(error.message).toContain('NestFactory.create(AppModule, new FastifyAdapter(), { rawBody: true })');
    expect(app.get(DeliveryLog).delivered).toEqual([]);
  });

  it('runs the @OnWebhook method of a delivered event', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const { app, origin } = await startFastifyApp(receiver, true);
    close = () => app.close();
    const event = createEvent('message.delivered');
    const { body, headers } = createSignedRequest(event, { secret: SECRET });
    const reply = await fetch(`${origin}/webhooks`, { method: 'POST', headers, body });
    expect(reply.status).toBe(200);
    expect(app.get(DeliveryLog).delivered).toEqual([event.data.message_id]);
  });
});
