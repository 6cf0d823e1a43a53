import {
  configError,
  createAdapter,
  type NodeRequestLike,
  nodeBody,
  nodeRequest,
  type ReceiverSource,
} from '../src/adapter.js';

const KOA_FIX =
  'In Koa, a body parser (koa-bodyparser, @koa/bodyparser, koa-body, …) read the body before the webhook ' +
  'middleware. Register app.use(createKoaMiddleware(receiver, { path: "/webhooks" })) before ' +
  'app.use(bodyParser()), or mount the webhook route on its router before the parser runs for it.';

/**
 * The parts of Koa's context (Koa 2 and 3) the middleware uses: written out, so that its types need neither
 * `koa` nor `@types/koa`.
 */
export interface KoaContextLike {
  readonly req: NodeRequestLike;
  readonly request: { readonly body?: unknown };
  readonly path: string;
  readonly originalUrl: string;
  /** The route's parameters, when a router matched one (@koa/router's `ctx.params`). */
  readonly params?: Readonly<Record<string, string | undefined>>;
  status: number;
  body: unknown;
  set(headers: Record<string, string>): void;
}

export interface KoaWebhookOptions {
  /**
   * Answer only this path (every method; others get the receiver's 405) and pass other paths on to `next`.
   * Matched as it is: a route with parameters (`/webhooks/:account`) is a router's, e.g.
   * `router.all('/webhooks/:account', createKoaMiddleware(receiver))` with @koa/router.
   */
  path?: string;
}

/** The middleware Koa runs: `(ctx, next) => Promise<void>`. */
export type KoaWebhookMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

const USAGE = "app.use(createKoaMiddleware(receiver, { path: '/webhooks' }))";

/**
 * Koa 2 and 3 middleware: `app.use(createKoaMiddleware(receiver, { path: '/webhooks' }))`, registered before
 * any body parser, or `router.all('/webhooks', createKoaMiddleware(receiver))` on a router. Give it the
 * receiver, or a function that creates it at the first request. Reads the raw body from the request stream
 * itself; when a parser read it first, the receiver answers 500 body_already_parsed with the fix above (and
 * tells onError). The outcome is set on Koa's context, so its other middleware (logging, headers) still sees it.
 */
export function createKoaMiddleware(
  source: ReceiverSource,
  options: KoaWebhookOptions = {},
): KoaWebhookMiddleware {
  const { path } = options;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw configError(
      `messaging-webhooks/koa needs the path as a string starting with "/", got ${JSON.stringify(path)}: ${USAGE}.`,
    );
  }
  if (path?.includes('/:')) {
    throw configError(
      `messaging-webhooks/koa matches its path option as it is, so ${JSON.stringify(path)} would never match: mount a route with parameters on a router, router.all(${JSON.stringify(path)}, createKoaMiddleware(receiver)) with @koa/router, whose ctx.params reach the receiver.`,
    );
  }
  const handle = createAdapter<[KoaContextLike], void>(source, {
    name: 'messaging-webhooks/koa',
    usage: USAGE,
    read: (ctx) =>
      nodeRequest(ctx.req, {
        // A parser that read the stream left an object (answered body_already_parsed with the fix); one that
        // skipped the request (another content type) left `{}` and the stream unread: it is read as usual.
        body: nodeBody(ctx.req, { parsed: ctx.request.body, hint: KOA_FIX }),
        // The URL before any mount rewrote it, and @koa/router's matched route.
        url: () => ctx.originalUrl,
        params: () => ctx.params,
        route: () => {
          const route: unknown = (ctx as { _matchedRoute?: unknown })._matchedRoute;
          return typeof route === 'string' ? route : undefined;
        },
      }),
    // Set on Koa's context as it is: Koa sizes the body and sends it once the middleware returns.
    write: (outcome, ctx) => {
      ctx.status = outcome.status;
      ctx.set(outcome.headers);
      ctx.body = outcome.body;
    },
  });
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) await next();
    else await handle(ctx);
  };
}

/** @deprecated Renamed createKoaMiddleware (every adapter is `create<Platform><Kind>`); removed in 0.3. */
export const webhookMiddleware = createKoaMiddleware;
