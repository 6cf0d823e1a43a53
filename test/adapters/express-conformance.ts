import { createServer, type RequestListener } from 'node:http';
import { webhookHandler } from '../../adapters/express.js';
import type { SignatureProfile } from '../../src/index.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, MAX_BODY_BYTES } from './conformance-receiver.js';

type Handler = ReturnType<typeof webhookHandler>;
type Middleware = (...args: never[]) => unknown;

/** What the suite uses of an Express major: the same in 4 and 5. */
export interface ExpressMajor {
  (): RequestListener & {
    all(path: string, ...handlers: unknown[]): unknown;
    post(path: string, ...handlers: unknown[]): unknown;
    use(...handlers: unknown[]): unknown;
  };
  json(options?: { verify?: (req: never, res: never, buf: Buffer) => void }): Middleware;
  Router(options: {
    mergeParams: boolean;
  }): Middleware & { all(path: string, ...handlers: unknown[]): unknown };
  raw(options: { type: string; limit: number }): Middleware;
}

/**
 * The adapter conformance suite on one Express major, mounted the ways an app does: the body read from the
 * stream, behind express.raw(), behind express.json({ verify }) keeping rawBody, and on a router mounted under
 * the route's parameter.
 */
export function runExpressConformance(major: string, express: ExpressMajor): void {
  const conformanceApp = (mount: (app: ReturnType<ExpressMajor>, handler: Handler) => void) => {
    return async (profile: SignatureProfile) => {
      const { receiver, handled } = createConformanceReceiver(profile);
      const app = express();
      mount(app, webhookHandler(receiver));
      const server = createServer(app);
      const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
      return { url, handled: async () => handled, close: () => closeServer(server) };
    };
  };

  // app.all so that the 405 row reaches the adapter (with app.post, Express itself answers other methods 404).
  runConformanceSuite(
    `express ${major}, body read from the stream`,
    conformanceApp((app, handler) => {
      app.all('/webhooks/:account', handler);
      app.use(express.json());
    }),
  );

  // A router sees its mount path's parameters only when made with mergeParams: Express gives a router's
  // handlers the params of their own route, and restores the mount's once the router is done.
  runConformanceSuite(
    `express ${major}, a Router({ mergeParams: true }) mounted at /webhooks/:account`,
    conformanceApp((app, handler) => {
      const router = express.Router({ mergeParams: true });
      router.all('/', handler);
      app.use('/webhooks/:account', router);
    }),
  );

  // The parser answers oversized bodies itself (its own 413), and only POST reaches the route. Express 4's
  // body-parser refuses a br body itself (its own 415).
  const parserSkips = major === '4' ? ['compressed_body'] : [];
  runConformanceSuite(
    `express ${major} behind express.raw()`,
    conformanceApp((app, handler) => {
      app.post(
        '/webhooks/:account',
        express.raw({ type: 'application/json', limit: MAX_BODY_BYTES }),
        handler,
      );
    }),
    {
      skip: ['method_not_allowed', 'payload_too_large_declared', 'payload_too_large_chunked', ...parserSkips],
    },
  );

  // express.json() answers bodies it cannot parse or that pass its 100 kB limit before the route runs.
  runConformanceSuite(
    `express ${major} behind express.json({ verify }) keeping rawBody`,
    conformanceApp((app, handler) => {
      app.use(express.json({ verify: keepRawBody }));
      app.post('/webhooks/:account', handler);
    }),
    {
      skip: [
        'method_not_allowed',
        'invalid_json',
        'payload_too_large_declared',
        'payload_too_large_chunked',
        ...parserSkips,
      ],
    },
  );
}

export function keepRawBody(req: unknown, _res: unknown, buf: Buffer): void {
  (req as { rawBody?: Buffer }).rawBody = buf;
}
