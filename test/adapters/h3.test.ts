import { createServer } from 'node:http';
import { H3, readBody, toNodeHandler } from 'h3';
import {
  createApp,
  createRouter,
  defineEventHandler,
  readBody as readBodyV1,
  toNodeListener,
  toWebRequest,
} from 'h3v1';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, type FetchHandler } from '../../adapters/fetch.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

/**
 * The Fetch handler inside h3's own request path (what Nuxt server routes and Nitro run): h3 2 hands the
 * route the Request itself (event.req); h3 1 builds one from Node's request (toWebRequest). Each app is
 * served by h3's own Node listener over a real socket.
 */

function h3v2App(handle: FetchHandler): H3 {
  // all: other methods reach the handler and get its 405 with Allow: POST.
  return new H3().all('/webhooks/:account', (event) => handle(event.req, { params: event.context.params }));
}

function h3v1App(handle: FetchHandler) {
  const router = createRouter().use(
    '/webhooks/:account',
    defineEventHandler((event) => handle(toWebRequest(event), { params: event.context.params })),
  );
  return createApp().use(router);
}

runConformanceSuite('h3 2 (event.req, toNodeHandler)', async (profile) => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const server = createServer(toNodeHandler(h3v2App(createFetchHandler(receiver))));
  const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
  return { url, handled: async () => handled, close: () => closeServer(server) };
});

runConformanceSuite('h3 1 (toWebRequest, toNodeListener)', async (profile) => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const server = createServer(toNodeListener(h3v1App(createFetchHandler(receiver))));
  const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
  return { url, handled: async () => handled, close: () => closeServer(server) };
});

/** A route that read the body first, as `await readBody(event)` does, then handed on the Request. */
async function postThrough(listener: Parameters<typeof createServer>[1]) {
  const server = createServer(listener);
  try {
    const url = `${await listen(server)}/webhooks`;
    const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const response = await fetch(url, { method: 'POST', headers, body });
    return { status: response.status, body: await response.json() };
  } finally {
    await closeServer(server);
  }
}

describe('h3: a route that parsed the body first', () => {
  it('h3 2: readBody(event) before the handler is answered 500 body_already_parsed, saying what to do', async () => {
    const { receiver } = createConformanceReceiver();
    const handle = createFetchHandler(receiver);
    const app = new H3().post('/webhooks', async (event) => {
      await readBody(event);
      return handle(event.req);
    });
    const { status, body } = await postThrough(toNodeHandler(app));
    expect(status).toBe(500);
    expect(body.error.code).toBe('body_already_parsed');
    expect(body.error.message).toContain('request.clone()');
  });

  it('h3 2: the fix, the untouched event.req (or event.req.clone() for the other reader), is answered 200', async () => {
    const { receiver, handled } = createConformanceReceiver();
    const handle = createFetchHandler(receiver);
    const app = new H3().post('/webhooks', async (event) => {
      const response = await handle(event.req.clone());
      await event.req.json(); // the other reader, after the handler
      return response;
    });
    const { status, body } = await postThrough(toNodeHandler(app));
    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(handled).toHaveLength(1);
  });

  it('h3 1: readBody(event) first is harmless, toWebRequest replays the raw bytes h3 kept: 200', async () => {
    const { receiver, handled } = createConformanceReceiver();
    const handle = createFetchHandler(receiver);
    const app = createApp();
    app.use(
      '/webhooks',
      defineEventHandler(async (event) => {
        await readBodyV1(event);
        return handle(toWebRequest(event));
      }),
    );
    const { status, body } = await postThrough(toNodeListener(app));
    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(handled).toHaveLength(1);
  });
});
