import type { Request } from 'express';
import { type NodeBodySource, nodeBodyReader } from '../src/adapter.js';

/**
 * A request an earlier middleware may have read: express.raw() leaves bytes, a verify callback keeps rawBody,
 * and Express 4's body-parser marks a body it read with `_body`.
 */
type ExpressRequest = Request & { rawBody?: unknown; _body?: unknown };

/**
 * Where an Express request's raw body is: the bytes a parser kept, or the stream when none read it. `fix` says
 * how to keep the bytes on the platform at hand, for the answer when a parser left only an object.
 */
export function expressBodySource(req: Request, fix: string): NodeBodySource {
  // Read as unknown: a package that types IncomingMessage's rawBody as a string (@koa/bodyparser) may be installed.
  const rawBody: unknown = (req as ExpressRequest).rawBody;
  if (rawBody instanceof Uint8Array) return { rawBody };
  const body: unknown = req.body;
  if (body instanceof Uint8Array || typeof body === 'string') return { rawBody: body };
  // A parser left an object: passed on as it is, the core answers body_already_parsed with the fix.
  const parsed = body !== undefined && !untouchedByBodyParser1(req as ExpressRequest, body);
  if (parsed) return { rawBody: body, rawBodyHint: fix };
  // No parser ran (or one skipped the request), or one read the stream and kept nothing (readNodeBody then
  // resolves at once, without bytes).
  return { readBody: nodeBodyReader(req), rawBodyHint: fix };
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
