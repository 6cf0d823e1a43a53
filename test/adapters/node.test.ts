import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { BODY_LENGTH_MISMATCH, BODY_TIMEOUT, type Outcome, readNodeBody } from '../../src/adapter.js';
import { gate } from '../support/gate.js';
import { rawExchange } from '../support/raw-http.js';
import { until } from '../support/until.js';
import { closeServer, listen, runConformanceSuite } from './conformance.js';
import { ACCOUNT, accountRoute, createConformanceReceiver } from './conformance-receiver.js';

runConformanceSuite('node:http', async (profile) => {
  const { receiver, handled } = createConformanceReceiver(profile);
  const server = createServer(createNodeHandler(receiver, { params: (req) => accountRoute(req.url) }));
  const url = `${await listen(server)}/webhooks/${ACCOUNT}`;
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

  // A deadline no other timer of the test uses, to tell the reader's timer apart.
  const DEADLINE_MS = 10_007;

  // A webhook's small body arrives with its headers: taking it from the stream's buffer costs no deadline timer
  // and no stream events, and the connection must still go on to the next request as usual.
  it('takes a body that came with its headers from the buffer, with no deadline timer', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const bodies: string[] = [];
    const server = createServer(async (req, res) => {
      const body = await readNodeBody(req, 1024, DEADLINE_MS);
      bodies.push(Buffer.from(body as Uint8Array).toString());
      res.end('ok');
    });
    const url = new URL(await listen(server));
    try {
      const request = (body: string) =>
        `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
      const answer = await rawExchange(Number(url.port), [request('{"a":1}') + request('{"b":2}')], {
        answers: 2,
      });
      expect(answer.statuses).toEqual([200, 200]);
      expect(bodies).toEqual(['{"a":1}', '{"b":2}']);
      expect(timers.mock.calls.filter(([, ms]) => ms === DEADLINE_MS)).toEqual([]);
    } finally {
      timers.mockRestore();
      await closeServer(server);
    }
  });

  it('reads a body that comes after its headers under the deadline', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const arrived = gate();
    const server = createServer(async (req, res) => {
      arrived.open();
      const body = await readNodeBody(req, 1024, DEADLINE_MS);
      res.end(Buffer.from(body as Uint8Array));
    });
    const url = await listen(server);
    try {
      const answered = new Promise<string>((resolve, reject) => {
        const request = httpRequest(url, { method: 'POST', headers: { 'content-length': '7' } }, (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve(text));
        });
        request.on('error', reject);
        request.flushHeaders();
        void arrived.opened.then(() => request.end('{"a":1}'));
      });
      expect(await answered).toBe('{"a":1}');
      expect(timers.mock.calls.filter(([, ms]) => ms === DEADLINE_MS)).toHaveLength(1);
    } finally {
      timers.mockRestore();
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
