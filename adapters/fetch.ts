import {
  type ReceiveRequest,
  type ReceiverSource,
  readWebBody,
  receiverAtFirstRequest,
  toWebResponse,
  type WebRouteParams,
} from '../src/adapter.js';

const FETCH_FIX =
  'The Request body was read (request.json(), request.text(), …) before the webhook handler: ' +
  'pass it the untouched Request, or request.clone() if something else must read it too.';

/**
 * What the platform hands a handler besides the request: Cloudflare Workers' and Vercel's `waitUntil`, to keep
 * work alive after the response, and the route's parameters, for the receiver's `tenant` option (frameworks
 * pass `{ params }` from their own request event: SvelteKit's `event.params`, h3's `event.context.params`).
 */
export interface FetchHandlerContext {
  waitUntil?(work: Promise<unknown>): void;
  /** The route's parameters as the framework matched them: an object, or a promise of one (Next.js 15 on). */
  params?: WebRouteParams;
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
    // Awaited only when it is a promise: a plain object costs the request no turn of the microtask queue.
    const given = context?.params;
    const params = typeof (given as PromiseLike<unknown>)?.then === 'function' ? await given : given;
    const outcome = await receiver.receive({
      method: request.method,
      headers: request.headers,
      url: request.url,
      ...(params ? { params: params as ReceiveRequest['params'] } : {}),
      readBody: (maxBytes, deadlineMs) => readWebBody(request, maxBytes, deadlineMs),
      rawBodyHint: FETCH_FIX,
      // Called as a method: Workers' ctx.waitUntil needs its `this`.
      ...(typeof waitUntil === 'function' ? { waitUntil: (work) => context?.waitUntil?.(work) } : {}),
    });
    return toWebResponse(outcome);
  };
}
