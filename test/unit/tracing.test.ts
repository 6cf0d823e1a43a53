import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { expectChild, type Recorded, recordSpans, spanTexts } from '../support/tracing.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';

let recorded: Recorded;
beforeEach(() => {
  recorded = recordSpans();
});
afterEach(() => recorded.close());

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`;

function tracedReceiver(options: { ack?: 'sync' | 'async' } = {}) {
  return createReceiver({
    secrets: SECRET,
    tracing: openTelemetry({ tracerProvider: recorded.provider }),
    ...options,
  });
}

describe('a traced delivery', () => {
  it('is one SERVER span with verify, claim and handler under it; a handler’s own span nests in its span', async () => {
    const receiver = tracedReceiver();
    const tracer = recorded.provider.getTracer('app');
    let active: string | undefined;
    receiver.on('message.delivered', () => {
      active = trace.getActiveSpan()?.spanContext().spanId;
      tracer.startSpan('app work').end();
    });
    const event = deliveredEvent();
    const request = delivery(event, { headers: { 'user-agent': 'service/1', host: 'hooks.example:8443' } });
    const outcome = await receiver.receive({ ...request, url: '/webhooks?token=abc', route: '/webhooks' });
    expect(outcome.status).toBe(200);

    const server = recorded.span('POST /webhooks');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(server.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/webhooks',
      'url.path': '/webhooks',
      'server.address': 'hooks.example',
      'server.port': 8443,
      'user_agent.original': 'service/1',
      'http.response.status_code': 200,
      'messaging.message.id': event.id,
      'messaging_webhooks.request_id': outcome.requestId,
      'messaging_webhooks.outcome': 'processed',
      'messaging_webhooks.event.type': 'message.delivered',
      'messaging_webhooks.event.id': event.id,
      'messaging_webhooks.ack': 'sync',
    });
    for (const name of ['verify', 'claim', 'handler']) {
      expectChild(recorded.span(name), server, SpanKind.INTERNAL);
    }
    const handler = recorded.span('handler');
    expect(active).toBe(handler.spanContext().spanId);
    expectChild(recorded.span('app work'), handler, SpanKind.INTERNAL);
  });

  it('continues the trace of an incoming traceparent, with or without a propagator registered', async () => {
    const receiver = tracedReceiver();
    receiver.on('message.delivered', () => {});
    const sent = (headers: Record<string, string>) =>
      receiver.receive(delivery(deliveredEvent(), { headers }));
    await sent({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    // NodeTracerProvider.register() registers the W3C propagator globally, as NodeSDK does.
    const node = new NodeTracerProvider();
    node.register();
    await sent({ traceparent: TRACEPARENT });
    await node.shutdown();
    const servers = recorded.spans().filter((span) => span.kind === SpanKind.SERVER);
    expect(servers).toHaveLength(2);
    for (const server of servers) {
      expect(server.spanContext().traceId).toBe(INCOMING_TRACE);
      expect(server.parentSpanContext).toMatchObject({ spanId: INCOMING_SPAN, isRemote: true });
    }
    expect(servers[0]?.spanContext().traceState?.get('vendor')).toBe('1');
  });

  it('ignores a malformed traceparent: a new trace', async () => {
    const receiver = tracedReceiver();
    await receiver.receive(
      delivery(deliveredEvent(), { headers: { traceparent: `ff-${INCOMING_TRACE}-x-01` } }),
    );
    const server = recorded.span('POST');
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.spanContext().traceId).not.toBe(INCOMING_TRACE);
  });

  it('goes under the server span an HTTP instrumentation already started, as an INTERNAL span', async () => {
    const receiver = tracedReceiver();
    const outer = recorded.provider.getTracer('http').startSpan('POST', { kind: SpanKind.SERVER });
    await context.with(trace.setSpan(context.active(), outer), () =>
      receiver.receive(delivery(deliveredEvent(), { headers: { traceparent: TRACEPARENT } })),
    );
    outer.end();
    const ours = recorded.spans().find((span) => span.attributes['messaging_webhooks.outcome']);
    expect(ours?.kind).toBe(SpanKind.INTERNAL);
    expect(ours?.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  });

  it('marks a 4xx by its status code and reason only, and fails the verify span', async () => {
    const receiver = tracedReceiver();
    const outcome = await receiver.receive(delivery(deliveredEvent(), { secret: 'whsec_someone_else_1234' }));
    expect(outcome.status).toBe(401);
    const server = recorded.span('POST');
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 401,
      'messaging_webhooks.outcome': 'signature_mismatch',
      'messaging_webhooks.reason': 'signature_mismatch',
    });
    const verify = recorded.span('verify');
    expect(verify.status).toEqual({ code: SpanStatusCode.ERROR, message: 'signature_mismatch' });
    expect(
      recorded
        .spans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(['POST', 'verify']);
  });

  it('fails the server span on a 5xx, and records the handler’s error on the handler span', async () => {
    const receiver = tracedReceiver();
    receiver.on('message.delivered', () => {
      throw new TypeError('the handler broke');
    });
    const outcome = await receiver.receive(delivery(deliveredEvent()));
    expect(outcome.status).toBe(500);
    expect(recorded.span('POST').status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_failed' });
    const handler = recorded.span('handler');
    expect(handler.status.code).toBe(SpanStatusCode.ERROR);
    expect(handler.events[0]?.attributes).toMatchObject({
      'exception.type': 'TypeError',
      'exception.message': 'the handler broke',
    });
  });

  it('ends the handler span after the answer with ack: async', async () => {
    const receiver = tracedReceiver({ ack: 'async' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.on('message.delivered', () => held);
    expect((await receiver.receive(delivery(deliveredEvent()))).status).toBe(202);
    expect(recorded.spans().map((span) => span.name)).not.toContain('handler');
    expect(recorded.span('POST').attributes['messaging_webhooks.ack']).toBe('async');
    release();
    await receiver.close();
    expectChild(recorded.span('handler'), recorded.span('POST'), SpanKind.INTERNAL);
  });

  it('records no signature, secret or body anywhere in its spans', async () => {
    const receiver = tracedReceiver();
    receiver.on('message.delivered', () => {
      throw new Error('failed');
    });
    const event = deliveredEvent();
    const accepted = delivery(event);
    const refused = delivery(deliveredEvent(), { secret: 'whsec_someone_else_1234' });
    await receiver.receive(accepted);
    await receiver.receive(refused);
    const texts = spanTexts(recorded.spans());
    expect(recorded.spans().length).toBeGreaterThan(4);
    for (const request of [accepted, refused]) {
      const header = (request.headers as Record<string, string>)['webhook-signature'] as string;
      expect(texts).not.toContain(header);
      expect(texts).not.toContain(header.split('v1=')[1]);
    }
    for (const secret of [SECRET, 'whsec_someone_else_1234']) expect(texts).not.toContain(secret);
    expect(texts).not.toContain(event.data.message_id);
  });
});

describe('the tracing option', () => {
  it('refuses anything but a Tracing, saying what to pass', () => {
    for (const wrong of [{}, null, 'otel', { startDelivery: () => undefined }]) {
      expect(() => createReceiver({ secrets: SECRET, tracing: wrong as never })).toThrow(WebhookConfigError);
      expect(() => createReceiver({ secrets: SECRET, tracing: wrong as never })).toThrow(/openTelemetry\(\)/);
    }
  });

  it('with no tracer provider registered, records nothing and answers as without it', async () => {
    const receiver = createReceiver({ secrets: SECRET, tracing: openTelemetry() });
    let handled = 0;
    receiver.on('message.delivered', () => {
      handled++;
    });
    const outcome = await receiver.receive(
      delivery(deliveredEvent(), { headers: { traceparent: TRACEPARENT } }),
    );
    expect({ status: outcome.status, handled, spans: recorded.spans().length }).toEqual({
      status: 200,
      handled: 1,
      spans: 0,
    });
  });

  it('takes the global tracer provider by default', async () => {
    trace.setGlobalTracerProvider(recorded.provider);
    const receiver = createReceiver({ secrets: SECRET, tracing: openTelemetry() });
    await receiver.receive(delivery(deliveredEvent()));
    expect(recorded.span('POST').instrumentationScope.name).toBe('messaging-webhooks');
  });
});
