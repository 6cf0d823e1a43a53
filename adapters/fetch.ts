import {
  createAdapter,
  type ReceiverSource,
  toWebResponse,
  type WebRequestContext,
  webRequest,
} from '../src/adapter.js';

const FETCH_FIX =
  'The Request body was read (request.json(), request.text(), …) before the webhook handler: ' +
  'pass it the untouched Request, or request.clone() if something else must read it too.';

/**
 * What the platform hands a handler besides the request: Cloudflare Workers' and Vercel's `waitUntil`, to keep
 * work alive after the response, and the route's parameters, for the receiver's `tenant` option (frameworks
 * pass `{ params }` from their own request event: SvelteKit's `event.params`, h3's `event.context.params`).
 */
export type FetchHandlerContext = WebRequestContext;

export type FetchHandler = (request: Request, context?: FetchHandlerContext) => Promise<Response>;

/**
 * A Fetch-API handler for Hono, Bun, Deno, Cloudflare Workers and other Web runtimes:
 * `(request, ctx?) => Promise<Response>`. Runs without node:crypto (Web Crypto verifies the signature).
 * Give it the receiver, or a function that creates it: that is called once, at the first request.
 */
export function createFetchHandler(source: ReceiverSource): FetchHandler {
  return createAdapter<[Request, FetchHandlerContext?], Response>(source, {
    name: 'messaging-webhooks/fetch',
    usage: 'export default { fetch: createFetchHandler(receiver) }',
    read: (request, context) => webRequest(request, FETCH_FIX, context),
    write: toWebResponse,
  });
}
