import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createAdapter,
  nodeBody,
  nodeRequest,
  type ReceiveRequest,
  type ReceiverSource,
  toWebResponse,
  type WebRouteParams,
  webRequest,
  writeNodeOutcome,
} from '../src/adapter.js';

const ROUTE_FIX =
  'The Request body was read (request.json(), request.text(), …) before the webhook route handler: ' +
  'pass it the untouched Request, or request.clone() if something else must read it too.';

const PAGES_FIX =
  "In the Next.js Pages Router, Next's body parser read the body before createNextPagesHandler: add " +
  'export const config = { api: { bodyParser: false } }; to the API route file (pages/api/…).';

/** What Next passes a route handler besides the request: the dynamic segments, a promise of them from Next 15 on. */
export interface NextRouteContext {
  params?: WebRouteParams;
}

/**
 * App Router: `export const POST = createNextRouteHandler(webhooks)` in `app/…/route.ts`, where `webhooks` is
 * the shared receiver module's factory: it runs at the first request, so `next build` (which imports every
 * route with no secret set) never creates a receiver. Route handlers have no body cap: the body is read once,
 * as bytes, and reading stops past `maxBodyBytes`. For `ack: 'async'`, give the receiver Next's `after` as
 * `waitUntil`. A dynamic route's segments (`app/webhooks/[account]/route.ts`) reach the receiver as
 * `request.params`.
 */
export function createNextRouteHandler(
  source: ReceiverSource,
): (request: Request, context?: NextRouteContext) => Promise<Response> {
  return createAdapter<[Request, NextRouteContext?], Response>(source, {
    name: 'messaging-webhooks/next',
    usage: 'export const POST = createNextRouteHandler(webhooks)',
    // Only the params are passed on: Next's route context is no platform context with a waitUntil.
    read: (request, context) =>
      webRequest(request, ROUTE_FIX, context?.params ? { params: context.params } : undefined),
    write: toWebResponse,
  });
}

/** What a Pages Router API route gets: Node's request, with `body` set when Next's body parser ran. */
export type PagesApiRequest = IncomingMessage & { body?: unknown; query?: unknown };

/**
 * Pages Router: `export default createNextPagesHandler(webhooks)` in `pages/api/…` (a receiver, or a factory
 * called once at the first request), together with `export const config = { api: { bodyParser: false } }` so
 * that the body reaches it unread. `req.query` is passed as `request.params`: a dynamic route's segments
 * (`pages/api/webhooks/[account].ts`), and the query.
 */
export function createNextPagesHandler(
  source: ReceiverSource,
): (req: PagesApiRequest, res: ServerResponse) => Promise<void> {
  return createAdapter<[PagesApiRequest, ServerResponse], void>(source, {
    name: 'messaging-webhooks/next',
    usage: 'export default createNextPagesHandler(webhooks)',
    read: (req) =>
      nodeRequest(req, {
        // With the parser on, a JSON body arrives as an object: answered 500 body_already_parsed with the fix.
        body: nodeBody(req, { parsed: req.body, hint: PAGES_FIX }),
        // Next merges a dynamic route's segments into the query, over any query parameter of the same name.
        params: (req) => req.query as ReceiveRequest['params'],
      }),
    write: (outcome, _req, res) => writeNodeOutcome(res, outcome),
  });
}

/** @deprecated Renamed createNextRouteHandler (every adapter is `create<Platform>Handler`); removed in 0.3. */
export const createRouteHandler = createNextRouteHandler;

/** @deprecated Renamed createNextPagesHandler (every adapter is `create<Platform>Handler`); removed in 0.3. */
export const createPagesHandler = createNextPagesHandler;
