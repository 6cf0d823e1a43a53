import { createServer } from 'node:http';
import { SpanKind, trace } from '@opentelemetry/api';
import express from 'express';
import Fastify from 'fastify';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { webhooks } from '../../adapters/fastify.js';
import { createFetchHandler } from '../../adapters/fetch.js';
import { createNodeHandler } from '../../adapters/node.js';
import { createReceiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { closeServer, listen } from '../support/http.js';
import { expectChild, type Recorded, recordSpans, spanTexts } from '../support/tracing.js';

const SECRET = 'whsec_adapter_tracing_7c2e9a41';
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE_ID}-b7ad6b7169203331-01`;
const JSON_TYPE = { 'content-type': 'application/json' };

let recorded: Recorded;
beforeEach(() => {
  recorded = recordSpans();
});
afterEach(() => recorded.close());

/** A traced receiver whose handler starts a span of its own. */
function tracedReceiver() {
  const receiver = createReceiver({
    secrets: SECRET,
    tracing: openTelemetry({ tracerProvider: recorded.provider }),
  });
  receiver.on('message.delivered', () => {
    trace.getTracer('app').startSpan('app work').end();
  });
  return receiver;
}

function signed() {
  const delivery = createSignedRequest(createEvent('message.delivered'), { secret: SECRET });
  const headers: Record<string, string> = { ...delivery.headers, traceparent: TRACEPARENT };
  return { body: delivery.body, headers, signature: delivery.headers['webhook-signature'] as string };
}

/** A signed delivery as fetch's init. */
function signedInit() {
  const { body, headers } = signed();
  return { headers, body };
}

/** The delivery's spans: named `name`, in the incoming trace, the handler's own span under the handler span. */
function expectDeliveryTrace(name: string, attributes: Record<string, unknown>, secrets: string[]) {
  const server = recorded.span(name);
  expect(server.kind).toBe(SpanKind.SERVER);
  expect(server.spanContext().traceId).toBe(TRACE_ID);
  expect(server.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.response.status_code': 200,
    'messaging_webhooks.outcome': 'processed',
    ...attributes,
  });
  const handler = recorded.span('handler');
  expectChild(handler, server, SpanKind.INTERNAL);
  expectChild(recorded.span('verify'), server, SpanKind.INTERNAL);
  expectChild(recorded.span('app work'), handler, SpanKind.INTERNAL);
  const texts = spanTexts(recorded.spans());
  for (const secret of secrets) expect(texts).not.toContain(secret);
}

describe('traced deliveries through the adapters', () => {
  it('Express: named by its route template, mount path included', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const app = express();
    const router = express.Router();
    router.post('/:tenant/webhooks', webhookHandler(tracedReceiver()));
    app.use('/hooks', router);
    const delivery = signed();
    const response = await request(app)
      .post('/hooks/acme/webhooks?token=t0p')
      .set(delivery.headers)
      .send(delivery.body);
    expect(response.status).toBe(200);
    expectDeliveryTrace(
      'POST /hooks/:tenant/webhooks',
      {
        'http.route': '/hooks/:tenant/webhooks',
        'url.path': '/hooks/acme/webhooks',
        'server.address': '127.0.0.1',
      },
      [SECRET, delivery.signature, 't0p'],
    );
  });

  it('Express: a mount path with a parameter names every request alike, signed or not', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const app = express();
    const router = express.Router();
    router.post('/', webhookHandler(tracedReceiver()));
    app.use('/hooks/:tenant', router);
    // A sub-app under a parametric mount, with a router mounted inside it: every template on the way counts.
    const sub = express();
    const inner = express.Router();
    inner.post('/in/:channel', webhookHandler(tracedReceiver()));
    sub.use('/v1/', inner);
    app.use('/regions/:region', sub);
    const server = createServer(app);
    const base = await listen(server);
    try {
      for (let i = 0; i < 40; i++) {
        const path = i % 2 ? `/hooks/tenant-${i}` : `/regions/r${i}/v1/in/c${i}`;
        const response = await fetch(`${base}${path}`, { method: 'POST', headers: JSON_TYPE, body: '{}' });
        expect(response.status).toBe(401);
      }
      const one = await fetch(`${base}/hooks/acme`, { method: 'POST', ...signedInit() });
      expect(one.status).toBe(200);
    } finally {
      await closeServer(server);
    }
    const servers = recorded.spans().filter((span) => span.kind === SpanKind.SERVER);
    expect(servers).toHaveLength(41);
    expect(new Set(servers.map((span) => span.name))).toEqual(
      new Set(['POST /hooks/:tenant', 'POST /regions/:region/v1/in/:channel']),
    );
    expect(new Set(servers.map((span) => span.attributes['http.route']))).toEqual(
      new Set(['/hooks/:tenant', '/regions/:region/v1/in/:channel']),
    );
  });

  it('Express: a mount whose template cannot be told (a RegExp) names the request by its method alone', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const app = express();
    const router = express.Router();
    router.post('/in', webhookHandler(tracedReceiver()));
    app.use(/^\/t\/(\w+)/, router);
    for (const tenant of ['a', 'b']) {
      const response = await request(app).post(`/t/${tenant}/in`).set(JSON_TYPE).send('{}');
      expect(response.status).toBe(401);
    }
    const names = recorded
      .spans()
      .filter((span) => span.kind === SpanKind.SERVER)
      .map((span) => [span.name, span.attributes['http.route']]);
    expect(names).toEqual([
      ['POST', undefined],
      ['POST', undefined],
    ]);
  });

  it('Fastify: named by the plugin’s path with the prefix of its scope, over a real socket', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const app = Fastify();
    await app.register(
      async (scope) => {
        await scope.register(webhooks, { receiver: tracedReceiver(), path: '/webhooks' });
      },
      { prefix: '/v1' },
    );
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const delivery = signed();
      const response = await fetch(`${base}/v1/webhooks`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(200);
      expectDeliveryTrace(
        'POST /v1/webhooks',
        {
          'http.route': '/v1/webhooks',
          'url.path': '/v1/webhooks',
          'server.port': Number(new URL(base).port),
        },
        [SECRET, delivery.signature],
      );
    } finally {
      await app.close();
    }
  });

  it('Fastify: a prefix with a parameter names every request by its template', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const app = Fastify();
    await app.register(
      async (scope) => {
        await scope.register(webhooks, { receiver: tracedReceiver(), path: '/in/:channel' });
      },
      { prefix: '/hooks/:tenant' },
    );
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      for (const tenant of ['a', 'b', 'c']) {
        const response = await fetch(`${base}/hooks/${tenant}/in/${tenant}`, {
          method: 'POST',
          headers: JSON_TYPE,
          body: '{}',
        });
        expect(response.status).toBe(401);
      }
    } finally {
      await app.close();
    }
    const servers = recorded.spans().filter((span) => span.kind === SpanKind.SERVER);
    expect(servers.map((span) => [span.name, span.attributes['http.route']])).toEqual(
      Array(3).fill(['POST /hooks/:tenant/in/:channel', '/hooks/:tenant/in/:channel']),
    );
  });

  it('Fetch: no route known, so named by the method; the path and host from the Request URL', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const handle = createFetchHandler(tracedReceiver());
    const delivery = signed();
    const response = await handle(
      new Request('https://hooks.example/webhooks?secret=x', {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      }),
    );
    expect(response.status).toBe(200);
    expectDeliveryTrace(
      'POST',
      { 'url.path': '/webhooks', 'url.scheme': 'https', 'server.address': 'hooks.example' },
      [SECRET, delivery.signature, 'secret=x'],
    );
  });

  it('node:http: the path from req.url', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const server = createServer(createNodeHandler(tracedReceiver()));
    const base = await listen(server);
    try {
      const delivery = signed();
      const response = await fetch(`${base}/in/webhooks`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(200);
      expectDeliveryTrace('POST', { 'url.path': '/in/webhooks' }, [SECRET]);
    } finally {
      await closeServer(server);
    }
  });
});
