import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { readNodeBody } from '../../adapters/node-io.js';
import { BODY_LENGTH_MISMATCH, BODY_TIMEOUT, type Outcome } from '../../src/adapter.js';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { createConformanceReceiver } from './conformance-receiver.js';

runConformanceSuite('node:http', async (profile) => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const server = createServer(createNodeHandler(receiver));
  const url = `${await listen(server)}/webhooks`;
  return { url, handled: async () => handled, close: () => closeServer(server) };
});

describe('node:http adapter', () => {
  it('answers request_aborted, without hanging, when the client goes away mid-body', async () => {
    const { receiver } = createConformanceReceiver();
    const outcomes: Outcome[] = [];
    const observed = {
      ...receiver,
      async receive(request: Parameters<typeof receiver.receive>[0]) {
        const outcome = await receiver.receive(request);
        outcomes.push(outcome);
        return outcome;
      },
    };
    const server = createServer(createNodeHandler(observed));
    const arrived = gate();
    server.on('request', () => arrived.open());
    const url = await listen(server);
    try {
      const client = httpRequest(`${url}/webhooks`, {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': '1000',
          'webhook-signature': 't=1,v1=00',
        },
      });
      client.on('error', () => {});
      client.write('{"id":"evt_');
      await arrived.opened; // the server is reading this request's body when the client goes away
      client.destroy();
      await until(() => outcomes.length > 0);
      expect(outcomes.map((outcome) => outcome.reason)).toEqual(['request_aborted']);
    } finally {
      await closeServer(server);
    }
  });

  it('resolves at once with no bytes for a stream something else already read', async () => {
    const server = createServer(async (req, res) => {
      for await (const _chunk of req) {
        // another consumer drains the body
      }
      const body = await readNodeBody(req, 1024, 10_000);
      res.end(body === undefined ? 'undefined' : 'bytes');
    });
    const url = await listen(server);
    try {
      const response = await fetch(url, { method: 'POST', body: '{"a":1}' });
      expect(await response.text()).toBe('undefined');
    } finally {
      await closeServer(server);
    }
  });

  // Node's HTTP/1 parser never ends a body early or late; a request stream from elsewhere (a proxy layer, a
  // framework's own stream) can, and the reader must not take it for a complete body.
  it('resolves BODY_LENGTH_MISMATCH when the stream ends at another length than its Content-Length', async () => {
    const stream = Object.assign(Readable.from([Buffer.from('{"a":1}')]), {
      headers: { 'content-length': '100' },
      complete: true,
    }) as unknown as IncomingMessage;
    expect(await readNodeBody(stream, 1024, 10_000)).toBe(BODY_LENGTH_MISMATCH);
  });

  it('resolves BODY_TIMEOUT when the body is not complete within the deadline', async () => {
    const stream = Object.assign(new Readable({ read() {} }), {
      headers: {},
      complete: false,
    }) as unknown as IncomingMessage;
    expect(await readNodeBody(stream, 1024, 20)).toBe(BODY_TIMEOUT);
  });
});
