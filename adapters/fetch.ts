import { type ReceiverSource, readWebBody, receiverAtFirstRequest, toWebResponse } from '../src/adapter.js';

const FETCH_FIX =
  'The Request body was read (request.json(), request.text(), …) before the webhook handler: ' +
  'pass it the untouched Request, or request.clone() if something else must read it too.';

/** What Cloudflare Workers (ctx), Vercel and Next.js hand a handler to keep work alive after the response. */
export interface FetchHandlerContext {
  waitUntil?(work: Promise<unknown>): void;
}

export type FetchHandler = (request: Request, context?: FetchHandlerContext) => Promise<Response>;

/**
 * A Fetch-API handler for Hono, Bun, Deno, Cloudflare Workers and other Web runtimes:
 * `(request, ctx?) => Promise<Response>`. Runs without node:crypto (Web Crypto verifies the signature).
 * Give it the receiver, or a function that creates it: that is called once, at the first request.
 */
export function createFetchHandler(source: ReceiverSource): FetchHandler {
  const receiver = receiverAtFirstRequest(source);
  return async (request, context) => {
    const waitUntil = context?.waitUntil;
    const outcome = await receiver.receive({
      method: request.method,
      headers: request.headers,
      url: request.url,
      readBody: (maxBytes, deadlineMs) => readWebBody(request, maxBytes, deadlineMs),
      rawBodyHint: FETCH_FIX,
      // Called as a method: Workers' ctx.waitUntil needs its `this`.
      ...(typeof waitUntil === 'function' ? { waitUntil: (work) => context?.waitUntil?.(work) } : {}),
    });
    return toWebResponse(outcome);
  };
}
