import type { Request, Response } from 'express';
import {
  createAdapter,
  nodeBody,
  nodeRequest,
  type ReceiveRequest,
  type ReceiverSource,
  writeNodeOutcome,
} from '../src/adapter.js';

const EXPRESS_FIX =
  'In Express, a body parser (express.json(), express.urlencoded(), …) read the body before the webhook handler. ' +
  "Register app.post('/webhooks', createExpressHandler(receiver)) before app.use(express.json()), " +
  "or mount express.raw({ type: 'application/json' }) on the webhook route, " +
  'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).';

/**
 * Express 4 and 5 route handler: `app.post('/webhooks', createExpressHandler(receiver))`. Give it the receiver,
 * or a function that creates it at the first request. Reads the raw body from the stream itself, or takes the
 * bytes a parser left behind (express.raw(), a verify callback's `req.rawBody`, express.text()); when a parser
 * left only an object, the receiver answers 500 body_already_parsed with the fix above (and tells onError).
 */
export function createExpressHandler(source: ReceiverSource): (req: Request, res: Response) => Promise<void> {
  return createAdapter<[Request, Response], void>(source, {
    name: 'messaging-webhooks/express',
    usage: "app.post('/webhooks', createExpressHandler(receiver))",
    read: (req) =>
      nodeRequest(req, {
        // Read as unknown: a package that types IncomingMessage's rawBody as a string may be installed.
        body: nodeBody(req, {
          kept: (req as { rawBody?: unknown }).rawBody,
          parsed: req.body,
          hint: EXPRESS_FIX,
        }),
        // A router rewrites req.url to the part after its mount path: originalUrl is the request's.
        url: (req) => req.originalUrl,
        // The route template Express matched, mount templates included: never the path as sent (req.baseUrl).
        route: expressRoute,
        // A router mounted under a path with parameters sees them only when made with Router({ mergeParams: true }).
        params: (req) => req.params as ReceiveRequest['params'],
      }),
    write: (outcome, _req, res) => writeNodeOutcome(res, outcome),
  });
}

/** @deprecated Renamed createExpressHandler (every adapter is `create<Platform>Handler`); removed in 0.3. */
export const webhookHandler = createExpressHandler;

/**
 * The route template Express matched, mount templates included (`/hooks/:tenant` for `router.post('/', …)` under
 * `app.use('/hooks/:tenant', router)`), as tracing names a request. Express 5 gives a request its route's own
 * template (`req.route.path`) and the mount path as sent (`req.baseUrl`, `/hooks/acme`): a name built from the
 * latter would give every tenant, or any path a sender makes up, a span name of its own. The mount templates are
 * those of the router layers above the route (`layer.rawPath`, router 2.3 on) and of the apps mounted above its
 * app (`app.mountpath`), found once per route and kept. When they cannot be told (an older router, a RegExp or
 * list mount, a route reached through two mounts), a route under a mount has no template: its request is
 * named by the method alone.
 */
function expressRoute(req: Request): string | undefined {
  const route: unknown = req.route;
  const own = (route as { path?: unknown } | undefined)?.path;
  if (typeof own !== 'string') return undefined;
  let template = templates.get(route as object);
  if (template === undefined) {
    template = templateOf(req.app as unknown as MountedApp, route as object) ?? UNKNOWN;
    templates.set(route as object, template);
  }
  if (template !== UNKNOWN) return template;
  // Nothing above the route consumed a part of the path: its own template is the whole of it.
  return req.baseUrl === '' ? own : undefined;
}

const UNKNOWN = Symbol('unknown template');
const templates = new WeakMap<object, string | typeof UNKNOWN>();

/** What is read of an Express app and its router: the public names, typed as loosely as they are used. */
interface MountedApp {
  router?: { stack?: unknown };
  parent?: MountedApp;
  mountpath?: unknown;
}

interface RouterLayer {
  route?: unknown;
  rawPath?: unknown;
  handle?: { stack?: unknown };
}

/** The route's full template: the app's mount templates, then those of the routers between the app and it. */
function templateOf(app: MountedApp | undefined, route: object): string | undefined {
  const found = new Set<string | undefined>();
  collect(app?.router?.stack, route, '', found, new Set());
  if (found.size !== 1) return undefined;
  const [inApp] = found;
  const mounted = appTemplate(app);
  return inApp === undefined || mounted === undefined ? undefined : join(mounted, inApp);
}

/** Every template under which `stack` holds `route`; undefined for a way through a mount with no template. */
function collect(
  stack: unknown,
  route: object,
  prefix: string | undefined,
  found: Set<string | undefined>,
  seen: Set<unknown>,
): void {
  if (!Array.isArray(stack) || seen.has(stack)) return;
  seen.add(stack);
  for (const layer of stack as RouterLayer[]) {
    if (layer?.route === route) {
      found.add(prefix === undefined ? undefined : join(prefix, (route as { path: string }).path));
    } else if (Array.isArray(layer?.handle?.stack)) {
      const path = layer.rawPath;
      collect(
        layer.handle.stack,
        route,
        typeof path === 'string' ? join(prefix, path) : undefined,
        found,
        seen,
      );
    }
  }
  seen.delete(stack);
}

/** The mount templates of the apps above `app`, outermost first; '' for the app itself. */
function appTemplate(app: MountedApp | undefined): string | undefined {
  const paths: string[] = [];
  for (let at = app; at?.parent !== undefined; at = at.parent) {
    if (typeof at.mountpath !== 'string' || paths.length > 64) return undefined;
    paths.unshift(at.mountpath);
  }
  let template: string | undefined = '';
  for (const path of paths) template = join(template, path);
  return template;
}

/** A mount template and the path under it: `/hooks/:tenant` and `/` make `/hooks/:tenant`, `/` and `/in` make `/in`. */
function join(mount: string | undefined, path: string): string | undefined {
  if (mount === undefined) return undefined;
  const base = mount.endsWith('/') ? mount.replace(/\/+$/, '') : mount;
  if (base === '') return path;
  return path === '/' ? base : `${base}${path}`;
}
