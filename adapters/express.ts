import type { Request, Response } from 'express';
import {
  type AdapterReceiver,
  type NodeRequestNames,
  type ReceiveRequest,
  receiveNodeRequest,
} from '../src/adapter.js';
import { expressBodySource } from './express-body.js';
import { expressRoute } from './express-route.js';

const EXPRESS_FIX =
  'In Express, a body parser (express.json(), express.urlencoded(), …) read the body before webhookHandler. ' +
  "Register app.post('/webhooks', webhookHandler(receiver)) before app.use(express.json()), " +
  "or mount express.raw({ type: 'application/json' }) on the webhook route, " +
  'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).';

const EXPRESS_NAMES: NodeRequestNames<Request> = {
  // A router rewrites req.url to the part after its mount path: originalUrl is the request's.
  url: (req) => req.originalUrl,
  // The route template Express matched, mount templates included: never the path as sent (req.baseUrl).
  route: expressRoute,
  // A router mounted under a path with parameters sees them only when made with Router({ mergeParams: true }).
  params: (req) => req.params as ReceiveRequest['params'],
};

/**
 * Express 4 and 5 route handler: `app.post('/webhooks', webhookHandler(receiver))`.
 * Reads the raw body from the stream itself, or takes the bytes a parser left behind; when a parser left only
 * an object, the receiver answers 500 body_already_parsed with the fix above (and tells onError).
 */
export function webhookHandler(receiver: AdapterReceiver): (req: Request, res: Response) => Promise<void> {
  return (req, res) =>
    receiveNodeRequest(receiver, req, res, expressBodySource(req, EXPRESS_FIX), EXPRESS_NAMES);
}
