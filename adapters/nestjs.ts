import {
  All,
  Controller,
  type DynamicModule,
  Inject,
  type InjectionToken,
  Module,
  type ModuleMetadata,
  type OptionalFactoryDependency,
  type Provider,
  Req,
  Res,
  type Type,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Request, Response } from 'express';
import {
  type AdapterReceiver,
  configError,
  createAdapter,
  mountedReceiver,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeBody,
  nodeRequest,
  type ReceiveRequest,
  writeNodeOutcome,
} from '../src/adapter.js';
import type { DefaultEventHandler, DefaultEventType } from '../src/index.js';

/** The injection token of the module's receiver: `@Inject(WEBHOOK_RECEIVER) receiver: Receiver`. */
export const WEBHOOK_RECEIVER: unique symbol = Symbol('WEBHOOK_RECEIVER');

const NEST_FIX =
  "NestJS's JSON body parser read the body before the webhook route and kept no bytes to verify. " +
  'Create the app with NestFactory.create(AppModule, { rawBody: true }) (the parser then keeps req.rawBody), ' +
  'or with { bodyParser: false } (the webhook route then reads the stream itself).';

const NEST_FASTIFY_FIX =
  "NestJS's Fastify platform parsed the JSON body and kept no bytes to verify. " +
  'Create the app with NestFactory.create(AppModule, new FastifyAdapter(), { rawBody: true }) ' +
  '(the parser then keeps req.rawBody).';

const NAME = 'messaging-webhooks/nestjs';
const USAGE = "WebhooksModule.forRoot({ receiver: createReceiver({ secrets }), path: '/webhooks' })";

/** `WebhooksModule.forRoot(options)`. */
export interface WebhooksModuleOptions {
  /** The receiver that answers every request to `path` (createReceiver from 'messaging-webhooks'). */
  receiver: AdapterReceiver;
  /**
   * The webhook route, under the app's global prefix. Default: '/webhooks'. A route with parameters
   * (`/webhooks/:account`) hands them to the receiver as `request.params`.
   */
  path?: string;
  /** Make WEBHOOK_RECEIVER injectable in every module, not only in those that import this one. */
  global?: boolean;
}

/** `WebhooksModule.forRootAsync(options)`: `imports` are the modules whose providers `inject` names. */
export interface WebhooksModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Creates the receiver once the providers it needs (`inject`) are there, e.g. a ConfigService. */
  // biome-ignore lint/suspicious/noExplicitAny: Nest's own factory signature: the injected values are untyped
  useFactory: (...args: any[]) => AdapterReceiver | Promise<AdapterReceiver>;
  /** The providers passed to `useFactory`, in order. */
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  /** The webhook route, under the app's global prefix. Default: '/webhooks'. Fixed when the module is built. */
  path?: string;
  /** Make WEBHOOK_RECEIVER injectable in every module, not only in those that import this one. */
  global?: boolean;
}

/** The event an `@OnWebhook(K)` method gets: `delivered(event: WebhookEvent<'message.delivered'>)`. */
export type WebhookEvent<K extends DefaultEventType> = Parameters<DefaultEventHandler<K>>[0];

/** Legacy (`experimentalDecorators`, as Nest apps use) and standard method decorators alike. */
export interface WebhookMethodDecorator<K extends DefaultEventType> {
  /** Under `experimentalDecorators`, as Nest apps compile. */
  <M extends DefaultEventHandler<K>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void;
  /** Under standard decorators. */
  <M extends DefaultEventHandler<K>>(method: M, context: ClassMethodDecoratorContext): void;
}

/** Event types by method: read when the module starts, on the instance of every provider. */
const webhookMethods = new WeakMap<object, string[]>();

/**
 * Registers a provider's method as the receiver's handler of these event types:
 * `@OnWebhook('message.delivered') delivered(event) { … }`. The method runs with its provider as `this`.
 */
export function OnWebhook<K extends DefaultEventType>(...types: [K, ...K[]]): WebhookMethodDecorator<K> {
  return (target: unknown, _key: unknown, descriptor?: PropertyDescriptor) => {
    const method: unknown = descriptor === undefined ? target : descriptor.value;
    if (typeof method !== 'function') throw configError('@OnWebhook() decorates a method of a provider.');
    webhookMethods.set(method, [...(webhookMethods.get(method) ?? []), ...types]);
  };
}

/**
 * `WebhooksModule.forRoot({ receiver })` or `forRootAsync({ useFactory, inject })`: a route at `path` that
 * hands the raw bytes to the receiver, WEBHOOK_RECEIVER to inject, and every `@OnWebhook` method of the app's
 * providers registered on the receiver when the app starts. The receiver is closed when the app closes.
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest's dynamic modules are classes with static forRoot methods
export class WebhooksModule {
  /** The module around a receiver made already. */
  static forRoot(options: WebhooksModuleOptions): DynamicModule {
    const receiver = mountedReceiver(options?.receiver, { name: NAME, usage: USAGE }, { holds: true });
    return webhooksModule({ provide: WEBHOOK_RECEIVER, useValue: receiver }, options);
  }

  /** The module around a receiver made by a factory of other providers (configuration, secrets). */
  static forRootAsync(options: WebhooksModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function') {
      throw configError(
        'WebhooksModule.forRootAsync needs useFactory: forRootAsync({ useFactory: (config) => createReceiver({ secrets: config.get(…) }), inject: [ConfigService] }).',
      );
    }
    const provider: Provider = {
      provide: WEBHOOK_RECEIVER,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    };
    return webhooksModule(provider, options, options.imports ?? []);
  }
}
// A dynamic module's class carries Nest's module metadata; applied as a call, as Nest's own code is compiled.
Module({})(WebhooksModule);

function webhooksModule(
  receiver: Provider,
  options: { path?: string; global?: boolean },
  imports: NonNullable<ModuleMetadata['imports']> = [],
): DynamicModule {
  return {
    module: WebhooksModule,
    global: options.global === true,
    imports: [DiscoveryModule, ...imports],
    controllers: [webhookController(options.path ?? '/webhooks')],
    providers: [
      receiver,
      {
        provide: WebhookHandlers,
        useFactory: (discovery: DiscoveryService, scanner: MetadataScanner, found: AdapterReceiver) =>
          new WebhookHandlers(discovery, scanner, found),
        inject: [DiscoveryService, MetadataScanner, WEBHOOK_RECEIVER],
      },
    ],
    exports: [WEBHOOK_RECEIVER],
  };
}

/** Registers the `@OnWebhook` methods at module init; closes the receiver once the server stopped. */
class WebhookHandlers {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly receiver: AdapterReceiver,
  ) {}

  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      // A request-scoped provider has no instance to call outside a request.
      if (typeof instance !== 'object' || instance === null || !wrapper.isDependencyTreeStatic()) continue;
      if (seen.has(instance)) continue;
      seen.add(instance);
      const prototype: unknown = Object.getPrototypeOf(instance);
      if (typeof prototype !== 'object' || prototype === null) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method: unknown = (prototype as Record<string, unknown>)[name];
        if (typeof method !== 'function') continue;
        for (const type of webhookMethods.get(method) ?? []) {
          this.receiver.on(type, (event: unknown, ctx: unknown) => method.call(instance, event, ctx));
        }
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.receiver.close();
  }
}

/** A controller class per module: Nest reads a route's path from its class. */
function webhookController(path: string): Type {
  class WebhookController {
    readonly #onExpress: (req: Request, res: Response) => Promise<void>;
    readonly #onFastify: (req: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void>;

    constructor(receiver: AdapterReceiver) {
      const spec = { name: NAME, usage: USAGE };
      this.#onExpress = createAdapter<[Request, Response], void>(receiver, {
        ...spec,
        read: (req) =>
          nodeRequest(req, {
            body: nodeBody(req, {
              kept: (req as { rawBody?: unknown }).rawBody,
              parsed: req.body,
              hint: NEST_FIX,
            }),
            url: (req) => req.originalUrl,
            // Nest registers its routes on the app itself, global prefix included: the template is the route's.
            route: (req) =>
              req.baseUrl === '' ? (req.route as { path?: string } | undefined)?.path : undefined,
            params: (req) => req.params as ReceiveRequest['params'],
          }),
        write: (outcome, _req, res) => writeNodeOutcome(res, outcome),
      });
      this.#onFastify = createAdapter<[FastifyRequestLike, FastifyReplyLike], void>(receiver, {
        ...spec,
        read: (req) =>
          nodeRequest(req.raw, {
            // Fastify parses JSON before any route; Nest's `rawBody: true` keeps the bytes beside it.
            body: nodeBody(req.raw, { kept: req.rawBody, parsed: req.body, hint: NEST_FASTIFY_FIX }),
            url: () => req.url,
            route: () => req.routeOptions?.url,
            params: () => req.params as ReceiveRequest['params'],
          }),
        // Written to Node's response: hijack() told Fastify the route sends it.
        write: (outcome, _req, reply) => writeNodeOutcome(reply.raw, outcome),
      });
    }

    handle(req: Request | FastifyRequestLike, res: Response | FastifyReplyLike): Promise<void> {
      if (!('raw' in req)) return this.#onExpress(req, res as Response);
      (res as FastifyReplyLike).hijack();
      return this.#onFastify(req, res as FastifyReplyLike);
    }
  }
  const prototype = WebhookController.prototype;
  // Every method reaches the receiver, which answers 405 itself; @Res() leaves the answer to it.
  Controller(path)(WebhookController);
  Inject(WEBHOOK_RECEIVER)(WebhookController, undefined, 0);
  All()(prototype, 'handle', Object.getOwnPropertyDescriptor(prototype, 'handle') as PropertyDescriptor);
  Req()(prototype, 'handle', 0);
  Res()(prototype, 'handle', 1);
  return WebhookController;
}

/** What Nest's Fastify platform hands a route (`@Req()`, `@Res()`): Fastify's request and reply over Node's. */
interface FastifyRequestLike {
  raw: NodeRequestLike;
  url: string;
  body?: unknown;
  rawBody?: unknown;
  routeOptions?: { url?: string };
  params?: unknown;
}

interface FastifyReplyLike {
  raw: NodeResponseLike;
  hijack(): unknown;
}
