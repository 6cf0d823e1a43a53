import 'reflect-metadata';
import type { Server } from 'node:http';
import {
  type DynamicModule,
  type INestApplication,
  Module,
  type NestApplicationOptions,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { listen } from '../../support/http.js';

export interface NestServer {
  app: INestApplication;
  /** The app's origin, e.g. http://127.0.0.1:41234. */
  origin: string;
}

/** A Nest application on the Express platform whose root module imports `webhooks`, on a loopback port. */
export async function startNestApp(
  webhooks: DynamicModule,
  options: NestApplicationOptions = {},
  providers: NonNullable<Parameters<typeof Module>[0]>['providers'] = [],
  configure: (app: INestApplication) => void = () => {},
  imports: NonNullable<Parameters<typeof Module>[0]>['imports'] = [],
): Promise<NestServer> {
  @Module({ imports: [webhooks, ...imports], providers })
  class AppModule {}
  const app = await NestFactory.create(AppModule, {
    logger: false,
    abortOnError: false,
    forceCloseConnections: true,
    ...options,
  });
  configure(app);
  await app.init();
  const origin = await listen(app.getHttpServer() as Server);
  return { app, origin };
}
