import {
  type AdapterReceiver,
  configError,
  type NodeBodySource,
  type NodeRequestLike,
  type NodeRequestNames,
  type NodeResponseLike,
  nodeBodyReader,
  receiveNodeRequest,
} from '../src/adapter.js';

const KOA_FIX =
  'In Koa, a body parser (koa-bodyparser, @koa/bodyparser, koa-body, …) read the body before the webhook ' +
  'middleware. Register app.use(webhookMiddleware(receiver, { path: "/webhooks" })) before ' +
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
   * `router.all('/webhooks/:account', webhookMiddleware(receiver))` with @koa/router.
   */
  path?: string;
}

/** The middleware Koa runs: `(ctx, next) => Promise<void>`. */
export type KoaWebhookMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

const USAGE = "app.use(webhookMiddleware(receiver, { path: '/webhooks' }))";

/**
 * Koa 2 and 3 middleware: `app.use(webhookMiddleware(receiver, { path: '/webhooks' }))`, registered before any
 * body parser, or `router.all('/webhooks', webhookMiddleware(receiver))` on a router. Reads the raw body from
 * the request stream itself; when a parser read it first, the receiver answers 500 body_already_parsed with the
 * fix above (and tells onError). The outcome is written through Koa's response, so its other middleware
 * (logging, headers) still sees it.
 */
export function webhookMiddleware(
  receiver: AdapterReceiver,
  options: KoaWebhookOptions = {},
): KoaWebhookMiddleware {
  if (typeof receiver?.receive !== 'function') {
    throw configError(
      `messaging-webhooks/koa needs the receiver to mount, got ${receiver === undefined ? 'none' : 'something else'}: ${USAGE}.`,
    );
  }
  const { path } = options;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw configError(
      `messaging-webhooks/koa needs the path as a string starting with "/", got ${JSON.stringify(path)}: ${USAGE}.`,
    );
  }
  if (path?.includes('/:')) {
    throw configError(
      `messaging-webhooks/koa matches its path option as it is, so ${JSON.stringify(path)} would never match: mount a route with parameters on a router, router.all(${JSON.stringify(path)}, webhookMiddleware(receiver)) with @koa/router, whose ctx.params reach the receiver.`,
    );
  }
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) {
      await next();
      return;
    }
    await receiveNodeRequest(receiver, ctx.req, koaResponse(ctx), bodySource(ctx), koaNames(ctx));
  };
}

function bodySource(ctx: KoaContextLike): NodeBodySource {
  const parsed = ctx.request.body;
  // A parser that read the stream left an object or text (decoded, so no longer the signed bytes): passed on as
  // it is, the core answers body_already_parsed with the fix. A parser that skipped the request (another
  // content type) left `{}` and the stream unread: it is read as usual.
  if (parsed !== undefined && ctx.req.readableEnded) return { rawBody: parsed, rawBodyHint: KOA_FIX };
  return { readBody: nodeBodyReader(ctx.req), rawBodyHint: KOA_FIX };
}

/** Writes the outcome through Koa's response as it is: Koa sizes the body and sends it after the middleware. */
function koaResponse(ctx: KoaContextLike): NodeResponseLike {
  return {
    writeHead(status, headers) {
      ctx.status = status;
      ctx.set(headers);
    },
    end(body) {
      ctx.body = body;
    },
  };
}

/** Koa's names for tracing: the URL before any mount rewrote it, and @koa/router's matched route. */
function koaNames(ctx: KoaContextLike): NodeRequestNames<NodeRequestLike> {
  return {
    url: () => ctx.originalUrl,
    params: () => ctx.params,
    route: () => {
      const route: unknown = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      return typeof route === 'string' ? route : undefined;
    },
  };
}
