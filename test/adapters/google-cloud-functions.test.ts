import { randomUUID } from 'node:crypto';
import * as functions from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { describe, expect, it } from 'vitest';
import { createCloudFunction } from '../../adapters/google-cloud-functions.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, createConformanceReceiver, SECRET } from './conformance-receiver.js';

/** The function registered under a name of its own, served by the Functions Framework's own server. */
async function serve(handler: ReturnType<typeof createCloudFunction>) {
  const name = `webhooks-${randomUUID()}`;
  functions.http(name, handler as unknown as functions.HttpFunction);
  const server = getTestServer(name);
  return { server, base: await listen(server) };
}

// The framework's body parsers read the whole body before the function runs (so the cases that send part of
// a body and wait are the framework's), and its JSON parser answers a body that is not JSON itself.
runConformanceSuite(
  'google cloud functions (functions-framework)',
  async (profile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const { server, base } = await serve(createCloudFunction(receiver));
    return {
      url: `${base}/webhooks/${ACCOUNT}`,
      handled: async () => handled,
      close: () => closeServer(server),
    };
  },
  // The framework sends every path to the function: no route, so no route parameters.
  { skip: ['payload_too_large_declared', 'payload_too_large_chunked', 'invalid_json', 'route_params'] },
);

describe('google cloud functions', () => {
  it('verifies the bytes the framework kept in rawBody though it parsed the JSON', async () => {
    const seen: string[] = [];
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', (event) => {
      seen.push(event.data.message_id);
    });
    const { server, base } = await serve(createCloudFunction(() => receiver));
    try {
      // Pretty-printed: re-serializing the parsed body would not match the signature, the kept bytes do.
      const event = createEvent('message.delivered');
      const { body, headers } = createSignedRequest(JSON.stringify(event, null, 2), { secret: SECRET });
      const response = await fetch(`${base}/webhooks`, { method: 'POST', headers, body });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true });
      expect(seen).toEqual([event.data.message_id]);
    } finally {
      await closeServer(server);
    }
  });
});
