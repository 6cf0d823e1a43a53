import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type NodeBodySource,
  nodeBodyReader,
  type ReceiverSource,
  receiveNodeRequest,
  receiverAtFirstRequest,
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
 * For `ack: 'async'`, give the receiver Next's `after` as `waitUntil`.
 */
export function createRouteHandler(source: ReceiverSource): (request: Request) => Promise<Response> {
  const handle = createFetchHandler(source);
  // Next passes { params } as the second argument: it is not a platform context, so it is not passed on.
  return (request) => handle(request);
}

/** What a Pages Router API route gets: Node's request, with `body` set when Next's body parser ran. */
export type PagesApiRequest = IncomingMessage & { body?: unknown };

/**
 * Pages Router: `export default createPagesHandler(webhooks)` in `pages/api/…` (a receiver, or a factory called
 * once at the first request), together with
 * `export const config = { api: { bodyParser: false } }` so that the body reaches it unread.
 */
export function createPagesHandler(
  source: ReceiverSource,
): (req: PagesApiRequest, res: ServerResponse) => Promise<void> {
  const receiver = receiverAtFirstRequest(source);
  return (req, res) => receiveNodeRequest(receiver, req, res, bodySource(req));
}

function bodySource(req: PagesApiRequest): NodeBodySource {
  // With the parser on, a JSON body arrives as an object: the core answers 500 body_already_parsed with the fix.
  if (req.body !== undefined) return { rawBody: req.body, rawBodyHint: PAGES_FIX };
  return { readBody: nodeBodyReader(req), rawBodyHint: PAGES_FIX };
}
