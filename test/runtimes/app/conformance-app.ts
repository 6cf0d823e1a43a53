// The conformance target every runtime serves, built from the packed package as a user would import it.
// Bundled by test/runtimes/bundle.ts with the package left external, so each runtime resolves it itself.
import { createReceiver } from 'messaging-webhooks';
import { createFetchHandler, type FetchHandlerContext } from 'messaging-webhooks/fetch';
import {
  accountRoute,
  createConformanceOptions,
  recordHandledEvents,
} from '../../adapters/conformance-handlers.js';

export interface ConformanceApp {
  webhooks(request: Request, context?: FetchHandlerContext): Promise<Response>;
  /** GET /handled: what the handlers saw, for the suite's checks. */
  handled(): Response;
}

/** Created at the first request: a Worker may not generate random values at its global scope. */
export function lazyConformanceApp(): () => ConformanceApp {
  let app: ConformanceApp | undefined;
  return () => {
    if (app) return app;
    const receiver = createReceiver(createConformanceOptions());
    const handled = recordHandledEvents(receiver);
    const webhooks = createFetchHandler(receiver);
    app = { webhooks, handled: () => Response.json(handled) };
    return app;
  };
}

/** A plain Fetch router: POST (and every other method) on /webhooks/:account, GET /handled. */
export function createFetchApp(): {
  fetch(request: Request, context?: FetchHandlerContext): Promise<Response>;
} {
  const app = lazyConformanceApp();
  return {
    async fetch(request, context) {
      const params = accountRoute(request.url);
      if (params) {
        // The route's params beside the platform's waitUntil, called on its own context (Workers needs its `this`).
        const waitUntil = context?.waitUntil;
        return app().webhooks(request, {
          params,
          ...(waitUntil ? { waitUntil: (work: Promise<unknown>) => context?.waitUntil?.(work) } : {}),
        });
      }
      if (new URL(request.url).pathname === '/handled') return app().handled();
      return new Response('not found', { status: 404 });
    },
  };
}

/** Prints the line the suite waits for. */
export function announce(port: number): void {
  console.log(`conformance target listening on http://127.0.0.1:${port}`);
}
