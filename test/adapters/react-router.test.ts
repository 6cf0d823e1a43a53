import { createServer } from 'node:http';
import { createRequestListener } from '@react-router/node';
import type { ServerBuild } from 'react-router';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, type FetchHandler } from '../../adapters/fetch.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

/**
 * The guide's resource routes (`app/routes/webhooks.ts` and `app/routes/webhooks.$account.ts`: an action and
 * no component) inside React Router's own
 * server: its request handler, served by @react-router/node's listener over a real socket. The build is the
 * part `react-router build` writes: a root route, the webhook route's module, a document entry.
 */
type Action = (args: { request: Request; params: Record<string, string | undefined> }) => Promise<Response>;

function serverBuild(action: Action): ServerBuild {
  const route = (id: string, path: string, module: object, parentId?: string) => ({
    id,
    path,
    module,
    ...(parentId ? { parentId } : {}),
  });
  return {
    entry: {
      module: {
        default: () => new Response('<!doctype html>', { headers: { 'content-type': 'text/html' } }),
      },
    },
    routes: {
      root: route('root', '', {}),
      'routes/webhooks': route('routes/webhooks', 'webhooks', { action }, 'root'),
      'routes/webhooks.$account': route('routes/webhooks.$account', 'webhooks/:account', { action }, 'root'),
    },
    assets: { entry: { module: '/entry.js', imports: [] }, routes: {}, url: '/manifest.js', version: '1' },
    publicPath: '/',
    assetsBuildDirectory: 'build/client',
    future: {},
    ssr: true,
    isSpaMode: false,
    prerender: [],
    routeDiscovery: { mode: 'lazy', manifestPath: '/__manifest' },
  } as unknown as ServerBuild;
}

function reactRouterServer(handle: FetchHandler) {
  const build = serverBuild(({ request, params }) => handle(request, { params }));
  return createServer(createRequestListener({ build, mode: 'production' }));
}

runConformanceSuite(
  'React Router (resource route action, @react-router/node)',
  async (profile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const server = reactRouterServer(createFetchHandler(receiver));
    const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
    return { url, handled: async () => handled, close: () => closeServer(server) };
  },
  // A route without a loader: React Router answers a GET itself, before the action (and so the adapter) runs.
  { skip: ['method_not_allowed'] },
);

describe('React Router: a PUT reaches the action', () => {
  it("is answered by the handler's 405 with Allow: POST", async () => {
    const { receiver } = createConformanceReceiver();
    const server = reactRouterServer(createFetchHandler(receiver));
    try {
      const url = `${await listen(server)}/webhooks`;
      const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
      const response = await fetch(url, { method: 'PUT', headers, body });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    } finally {
      await closeServer(server);
    }
  });
});
