// A NestJS 10 app (Express or Fastify platform) that installed the package from its tarball, serving the adapter
// conformance target: the test file imports this module from the app's folder, so @nestjs/* and
// messaging-webhooks resolve from the app's own node_modules. Untranspiled: decorators are applied as calls.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createReceiver } from 'messaging-webhooks';
import { WebhooksModule } from 'messaging-webhooks/nestjs';

export { version as nestVersion } from '@nestjs/core/package.json' with { type: 'json' };

/**
 * Starts the app on a loopback port, its route at `/webhooks/:account`, answering on `account`'s path.
 * `receiverOptions` are the receiver's (its accounts' secrets, body limit, profile);
 * `record(receiver)` registers the suite's handlers and returns what they saw.
 */
export async function startNest10({ platform, appOptions, receiverOptions, record, account }) {
  const receiver = createReceiver(receiverOptions);
  const handled = record(receiver);
  class AppModule {}
  Module({ imports: [WebhooksModule.forRoot({ receiver, path: '/webhooks/:account' })] })(AppModule);
  const options = { logger: false, abortOnError: false, ...appOptions };
  const app =
    platform === 'fastify'
      ? await NestFactory.create(
          AppModule,
          new (await import('@nestjs/platform-fastify')).FastifyAdapter(),
          options,
        )
      : await NestFactory.create(AppModule, options);
  await app.listen(0, '127.0.0.1');
  const origin = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { url: `${origin}/webhooks/${account}`, handled: async () => handled, close: () => app.close() };
}
