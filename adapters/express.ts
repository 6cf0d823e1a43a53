import type { Request, Response } from 'express';
import {
  type AdapterReceiver,
  type NodeBodySource,
  type NodeRequestNames,
  nodeBodyReader,
  receiveNodeRequest,
} from '../src/adapter.js';
import { expressRoute } from './express-route.js';

const EXPRESS_FIX =
  'In Express, a body parser (express.json(), express.urlencoded(), …) read the body before webhookHandler. ' +
  "Register app.post('/webhooks', webhookHandler(receiver)) before app.use(express.json()), " +
  "or mount express.raw({ type: 'application/json' }) on the webhook route, " +
  'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).';

/**
 * A request an earlier middleware may have read: express.raw() leaves bytes, a verify callback keeps rawBody,
 * and Express 4's body-parser marks a body it read with `_body`.
 */
type ExpressRequest = Request & { rawBody?: unknown; _body?: unknown };

const EXPRESS_NAMES: NodeRequestNames<Request> = {
  // A router rewrites req.url to the part after its mount path: originalUrl is the request's.
  url: (req) => req.originalUrl,
  // The route template Express matched, mount templates included: never the path as sent (req.baseUrl).
  route: expressRoute,
};

/**
 * Express 4 and 5 route handler: `app.post('/webhooks', webhookHandler(receiver))`.
 * Reads the raw body from the stream itself, or takes the bytes a parser left behind; when a parser left only
 * an object, the receiver answers 500 body_already_parsed with the fix above (and tells onError).
 */
export function webhookHandler(receiver: AdapterReceiver): (req: Request, res: Response) => Promise<void> {
  return (req, res) => receiveNodeRequest(receiver, req, res, bodySource(req), EXPRESS_NAMES);
}

function bodySource(req: ExpressRequest): NodeBodySource {
  // Read as unknown: a package that types IncomingMessage's rawBody as a string (@koa/bodyparser) may be installed.
  const rawBody: unknown = req.rawBody;
  if (rawBody instanceof Uint8Array) return { rawBody };
  const body: unknown = req.body;
  if (body instanceof Uint8Array || typeof body === 'string') return { rawBody: body };
  // A parser left an object: passed on as it is, the core answers body_already_parsed with the fix.
  const parsed = body !== undefined && !untouchedByBodyParser1(req, body);
  if (parsed) return { rawBody: body, rawBodyHint: EXPRESS_FIX };
  // No parser ran (or one skipped the request), or one read the stream and kept nothing (readNodeBody then
  // resolves at once, without bytes).
  return { readBody: nodeBodyReader(req), rawBodyHint: EXPRESS_FIX };
}

/**
 * Express 4's body-parser sets `req.body = {}` on every request it passes, and only marks `_body` when it read
 * the stream: a parser that skipped the request (another content type, no body) left the stream unread.
 */
function untouchedByBodyParser1(req: ExpressRequest, body: unknown): boolean {
  if (req._body === true || typeof body !== 'object' || body === null) return false;
  if (Object.getPrototypeOf(body) !== Object.prototype) return false;
  for (const _ in body) return false;
  return true;
}
