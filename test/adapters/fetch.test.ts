import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, type FetchHandler } from '../../adapters/fetch.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { bridge } from '../support/fetch-bridge.js';
import { until } from '../support/until.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, accountRoute, createConformanceReceiver, SECRET } from './conformance-receiver.js';

runConformanceSuite('fetch handler behind a node:http bridge', async (profile) => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const handle = createFetchHandler(receiver);
  const server = createServer(bridge((request) => handle(request, { params: accountRoute(request.url) })));
  const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
  return { url, handled: async () => handled, close: () => closeServer(server) };
});

function deliveryReceiver(options: { ack?: 'async' } = {}) {
  const seen: string[] = [];
  const receiver = createReceiver({ secrets: SECRET, maxBodyBytes: 64 * 1024, ...options });
  receiver.on('message.delivered', (event) => {
    seen.push(event.data.message_id);
  });
  return { handler: createFetchHandler(receiver), seen };
}

describe('fetch handler called directly', () => {
  it('answers a signed Request with a Response and runs the typed handler', async () => {
    const { handler, seen } = deliveryReceiver();
    const event = createEvent('message.delivered');
    const response = await handler(createSignedRequest(event, { secret: SECRET }).request);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(seen).toEqual([event.data.message_id]);
  });

  it('answers 405 with Allow for a GET (a Request without body)', async () => {
    const { handler } = deliveryReceiver();
    const response = await handler(new Request('http://localhost/webhooks'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('stops pulling a streamed body once it passes the limit and cancels the rest', async () => {
    const { handler } = deliveryReceiver();
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    });
    const { headers } = createSignedRequest('{}', { secret: SECRET });
    const request = new Request('http://localhost/webhooks', {
      method: 'POST',
      headers,
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await handler(request);
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('payload_too_large');
    expect(pulled).toBeLessThan(10); // 64 KiB is 4 chunks (plus what the stream buffers ahead)
    await until(() => cancelled);
  });

  it("reads a body of declared length whole, never making a bridge's Web stream", async () => {
    const { handler, seen } = deliveryReceiver();
    const event = createEvent('message.delivered');
    const { request } = createSignedRequest(event, { secret: SECRET });
    const bytes = new Uint8Array(await request.arrayBuffer());
    // Like @hono/node-server's request: `body` would build a Web stream over the Node request.
    const bridged = {
      method: 'POST',
      url: request.url,
      headers: new Headers([...request.headers, ['content-length', String(bytes.byteLength)]]),
      bodyUsed: false,
      get body(): never {
        throw new Error('the Web stream was made');
      },
      arrayBuffer: async () => bytes.slice().buffer,
    };
    const response = await handler(bridged as unknown as Request);
    expect(response.status).toBe(200);
    expect(seen).toEqual([event.data.message_id]);
  });

  it('refuses a body longer than its declared length once it passes the limit', async () => {
    const { handler } = deliveryReceiver();
    const { headers } = createSignedRequest('{}', { secret: SECRET });
    // A Request made in process can declare what it likes; a runtime's HTTP server holds a body to it.
    const declared = new Headers(headers);
    declared.set('content-length', '2');
    const response = await handler({
      method: 'POST',
      url: 'http://localhost/webhooks',
      headers: declared,
      bodyUsed: false,
      body: null,
      arrayBuffer: async () => new Uint8Array(128 * 1024).fill(0x20).buffer,
    } as unknown as Request);
    expect(response.status).toBe(413);
  });

  it('answers 500 body_already_parsed at once when the body was already read', async () => {
    const errors: string[] = [];
    const receiver = createReceiver({ secrets: SECRET });
    receiver.onError((error) => {
      errors.push(error.code);
    });
    const { request } = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    await request.text();
    const response = await createFetchHandler(receiver)(request);
    expect(response.status).toBe(500);
    const { error } = await response.json();
    expect(error.code).toBe('body_already_parsed');
    expect(error.message).toContain('request.clone()');
    expect(errors).toEqual(['body_already_parsed']);
  });

  it("hands async work to the platform's waitUntil, called on its context", async () => {
    const { handler, seen } = deliveryReceiver({ ack: 'async' });
    // Like Cloudflare's ExecutionContext: waitUntil only works when called on its object.
    class ExecutionContext {
      readonly work: Promise<unknown>[] = [];
      waitUntil(promise: Promise<unknown>) {
        this.work.push(promise);
      }
    }
    const ctx = new ExecutionContext();
    const event = createEvent('message.delivered');
    const response = await handler(createSignedRequest(event, { secret: SECRET }).request, ctx);
    expect(response.status).toBe(202);
    expect(ctx.work).toHaveLength(1);
    await Promise.all(ctx.work);
    expect(seen).toEqual([event.data.message_id]);
  });

  it("ignores a second argument without waitUntil (Bun's server, Deno's info)", async () => {
    const { handler } = deliveryReceiver();
    const event = createEvent('message.delivered');
    const info = { remoteAddr: { hostname: '127.0.0.1' } } as unknown as Parameters<FetchHandler>[1];
    const response = await handler(createSignedRequest(event, { secret: SECRET }).request, info);
    expect(response.status).toBe(200);
  });
});
