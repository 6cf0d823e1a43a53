import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { HttpRequest } from '@azure/functions';
import { describe, expect, it } from 'vitest';
import { type AzureHttpHandler, createAzureHandler } from '../../adapters/azure-functions.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, accountRoute, createConformanceReceiver, SECRET } from './conformance-receiver.js';

/**
 * Test-only bridge from node:http to the handler, as the Functions host runs it: the whole body is read first
 * (the host buffers it), then given to @azure/functions' own HttpRequest; the result is written back sized.
 */
function azureBridge(
  handler: AzureHttpHandler,
  route?: (url: string | undefined) => Record<string, string | undefined> | undefined,
) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const body = Buffer.concat(chunks);
    // The host matches the function's route (`route: 'webhooks/{account}'`) and hands over its parameters.
    const params = route?.(req.url);
    const request = new HttpRequest({
      method: req.method ?? 'GET',
      url: `http://${req.headers.host}${req.url}`,
      headers,
      ...(params ? { params: params as Record<string, string> } : {}),
      ...(body.length > 0 ? { body: { bytes: body } } : {}),
    });
    const result = await handler(request);
    const bytes = Buffer.from(result.body, 'utf8');
    res.writeHead(result.status, { ...result.headers, 'content-length': String(bytes.length) });
    res.end(bytes);
  };
}

// The host buffers the whole body before the function runs: the cases that send part of a body and wait are
// the host's.
runConformanceSuite(
  'azure functions v4 (HttpRequest)',
  async (profile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const server = createServer(azureBridge(createAzureHandler(receiver), accountRoute));
    const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
    return { url, handled: async () => handled, close: () => closeServer(server) };
  },
  { skip: ['payload_too_large_declared', 'payload_too_large_chunked'] },
);

describe('azure functions handler with a real HttpRequest', () => {
  it('answers a signed request and runs the typed handler', async () => {
    const seen: string[] = [];
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', (event) => {
      seen.push(event.data.message_id);
    });
    const event = createEvent('message.delivered');
    const signed = createSignedRequest(event, { secret: SECRET });
    const request = new HttpRequest({
      method: 'POST',
      url: 'https://example.azurewebsites.net/api/webhooks',
      headers: signed.headers,
      body: { string: signed.body },
    });
    const response = await createAzureHandler(() => receiver)(request);
    expect(response.status).toBe(200);
    expect(response.body).toBe('{"received":true}');
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(seen).toEqual([event.data.message_id]);
  });

  it('answers 500 body_already_parsed naming the fix when the body was read first', async () => {
    const signed = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
    const request = new HttpRequest({
      method: 'POST',
      url: 'https://example.azurewebsites.net/api/webhooks',
      headers: signed.headers,
      body: { string: signed.body },
    });
    await request.json();
    const response = await createAzureHandler(createReceiver({ secrets: SECRET }))(request);
    expect(response.status).toBe(500);
    const { error } = JSON.parse(response.body);
    expect(error.code).toBe('body_already_parsed');
    expect(error.message).toContain('request.clone()');
  });
});
