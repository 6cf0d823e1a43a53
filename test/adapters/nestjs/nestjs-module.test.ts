import { Injectable, Module } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { OnWebhook, WEBHOOK_RECEIVER, type WebhookEvent, WebhooksModule } from '../../../adapters/nestjs.js';
import { createReceiver, type WebhookHandlerError } from '../../../src/index.js';
import { createEvent, createSignedRequest } from '../../../src/testing.js';
import { SECRET } from '../conformance-receiver.js';
import { type NestServer, startNestApp } from './nest-app.js';

type Delivered = WebhookEvent<'message.delivered'>;

@Injectable()
class DeliveryLog {
  readonly delivered: string[] = [];

  @OnWebhook('message.delivered')
  onDelivered(event: Delivered): void {
    // `this` is the provider Nest made: the method runs on its instance.
    this.delivered.push(event.data.message_id);
  }
}

/** A service that takes the receiver by its token (a factory: parameter decorators are not standard). */
class ReceiverUser {
  constructor(readonly receiver: ReturnType<typeof createReceiver>) {}
}
const receiverUser = {
  provide: ReceiverUser,
  useFactory: (receiver: ReturnType<typeof createReceiver>) => new ReceiverUser(receiver),
  inject: [WEBHOOK_RECEIVER],
};

const CONFIG = Symbol('CONFIG');

@Module({ providers: [{ provide: CONFIG, useValue: { secret: SECRET } }], exports: [CONFIG] })
class ConfigModule {}

let running: NestServer | undefined;
afterEach(async () => {
  await running?.app.close();
  running = undefined;
});

async function post(url: string, event = createEvent('message.delivered')) {
  const { body, headers } = createSignedRequest(event, { secret: SECRET });
  const reply = await fetch(url, { method: 'POST', headers, body });
  return { event, status: reply.status, json: (await reply.json()) as Record<string, unknown> };
}

describe('WebhooksModule on NestJS 11 (Express platform)', () => {
  it('registers @OnWebhook methods of providers on the receiver, run on their instance', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    running = await startNestApp(WebhooksModule.forRoot({ receiver }), { rawBody: true }, [
      DeliveryLog,
      receiverUser,
    ]);
    const reply = await post(`${running.origin}/webhooks`);
    expect(reply.status).toBe(200);
    expect(running.app.get(DeliveryLog).delivered).toEqual([reply.event.data.message_id]);
    expect(running.app.get(ReceiverUser).receiver).toBe(receiver);
  });

  it('creates the receiver with forRootAsync from an imported provider, at its path under the global prefix', async () => {
    const webhooks = WebhooksModule.forRootAsync({
      imports: [ConfigModule],
      inject: [CONFIG],
      useFactory: (config: { secret: string }) => createReceiver({ secrets: config.secret }),
      path: '/hooks/in',
    });
    running = await startNestApp(webhooks, { rawBody: true }, [DeliveryLog], (app) =>
      app.setGlobalPrefix('api'),
    );
    const reply = await post(`${running.origin}/api/hooks/in`);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ received: true });
    expect(running.app.get(DeliveryLog).delivered).toEqual([reply.event.data.message_id]);
    expect((await post(`${running.origin}/webhooks`)).status).toBe(404);
  });

  it('answers 500 body_already_parsed naming rawBody: true when the app parsed JSON and kept no bytes', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const errors: WebhookHandlerError[] = [];
    receiver.onError((error) => {
      errors.push(error);
    });
    running = await startNestApp(WebhooksModule.forRoot({ receiver }), {}, [DeliveryLog]);
    const reply = await post(`${running.origin}/webhooks`);
    expect(reply.status).toBe(500);
    const error = reply.json.error as { code: string; message: string };
    expect(error.code).toBe('body_already_parsed');
    expect(error.message).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(error.message).not.toContain('express.json(');
    expect(errors.map((seen) => seen.code)).toEqual(['body_already_parsed']);
    expect(running.app.get(DeliveryLog).delivered).toEqual([]);
  });

  it('makes the receiver injectable in modules that do not import it with global: true', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    @Module({ providers: [receiverUser] })
    class ElsewhereModule {}
    running = await startNestApp(
      WebhooksModule.forRoot({ receiver, global: true }),
      { rawBody: true },
      [],
      (app) => app,
      [ElsewhereModule],
    );
    expect(running.app.get(ReceiverUser, { strict: false }).receiver).toBe(receiver);
  });

  it('closes the receiver when the app closes', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    running = await startNestApp(WebhooksModule.forRoot({ receiver }), { rawBody: true });
    await running.app.close();
    running = undefined;
    expect(
      (await receiver.receive({ method: 'POST', headers: {}, url: '/webhooks', rawBody: '' })).status,
    ).toBe(503);
  });

  it('refuses forRoot without a receiver and forRootAsync without a factory, saying what to pass', () => {
    expect(() => WebhooksModule.forRoot({} as never)).toThrow(/forRoot\(\{ receiver: createReceiver/);
    expect(() => WebhooksModule.forRootAsync({} as never)).toThrow(/forRootAsync\(\{ useFactory/);
  });
});

/** The decorator checks the method against its event type: tsc fails if an expected error does not occur. */
class MistypedHandlers {
  // @ts-expect-error a message.failed event is not a message.delivered one
  @OnWebhook('message.delivered')
  onFailed(event: WebhookEvent<'message.failed'>): string {
    return event.type;
  }

  // @ts-expect-error not an event type of the catalogue
  @OnWebhook('message.deliverd')
  onTypo(): void {}
}

it('types @OnWebhook methods by their event type (checked by tsc)', () => {
  expect(Object.getOwnPropertyNames(MistypedHandlers.prototype)).toContain('onFailed');
});
