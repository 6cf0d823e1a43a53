import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type NodeBodySource,
  type NodeRequestNames,
  nodeBodyReader,
  type ReceiveRequest,
  type ReceiverSource,
  receiveNodeRequest,
  receiverAtFirstRequest,
  type WebRouteParams,
} from '../src/adapter.js';
import { createFetchHandler } from './fetch.js';

const PAGES_FIX =
  "In the Next.js Pages Router, Next's body parser read the body before createPagesHandler: add " +
  'export const config = { api: { bodyParser: false } }; to the API route file (pages/api/…).';

/**
 * App Router: `export const POST = createRouteHandler(webhooks)` in `app/…/route.ts`, where `webhooks` is the
 * shared receiver module's factory: it runs at the first request, so `next build` (which imports every route
 * with no secret set) never creates a receiver. Route handlers have no
 * body cap: the body is read once, as bytes, and reading stops past `maxBodyBytes`.
 * For `ack: 'async'`, give the receiver Next's `after` as `waitUntil`. A dynamic route's segments
 * (`app/webhooks/[account]/route.ts`) reach the receiver as `request.params`.
 */
export function createRouteHandler(
  source: ReceiverSource,
): (request: Request, context?: NextRouteContext) => Promise<Response> {
  const handle = createFetchHandler(source);
  // Only the params are passed on: Next's route context is no platform context with a waitUntil.
  return (request, context) => handle(request, context?.params ? { params: context.params } : undefined);
}

/** What Next passes a route handler besides the request: the dynamic segments, a promise of them from Next 15 on. */
export interface NextRouteContext {
  params?: WebRouteParams;
}

/** What a Pages Router API route gets: Node's request, with `body` set when Next's body parser ran. */
export type PagesApiRequest = IncomingMessage & { body?: unknown; query?: unknown };

const PAGES_NAMES: NodeRequestNames<PagesApiRequest> = {
  url: (req) => req.url,
  route: () => undefined,
  // Next merges a dynamic route's segments into the query, over any query parameter of the same name.
  params: (req) => req.query as ReceiveRequest['params'],
};

/**
 * Pages Router: `export default createPagesHandler(webhooks)` in `pages/api/…` (a receiver, or a factory called
 * once at the first request), together with
 * `export const config = { api: { bodyParser: false } }` so that the body reaches it unread. `req.query` is
 * passed as `request.params`: a dynamic route's segments (`pages/api/webhooks/[account].ts`), and the query.
 */
export function createPagesHandler(
  source: ReceiverSource,
): (req: PagesApiRequest, res: ServerResponse) => Promise<void> {
  const receiver = receiverAtFirstRequest(source);
  return (req, res) => receiveNodeRequest(receiver, req, res, bodySource(req), PAGES_NAMES);
}

function bodySource(req: PagesApiRequest): NodeBodySource {
  // With the parser on, a JSON body arrives as an object: the core answers 500 body_already_parsed with the fix.
  if (req.body !== undefined) return { rawBody: req.body, rawBodyHint: PAGES_FIX };
  return { readBody: nodeBodyReader(req), rawBodyHint: PAGES_FIX };
}
