import { type Attributes, type Context, context, type Link, type SpanKind, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  type Sampler,
  type SamplingResult,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TraceSpan, Tracing } from '../../src/extend.js';
import { createReceiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { type Recorded, recordSpans } from '../support/tracing.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** A trace the sender did not sample: ParentBased drops every span in it. */
const UNSAMPLED = `00-${INCOMING_TRACE}-00f067aa0ba902b7-00`;

let recorded: Recorded;
beforeEach(() => {
  // For its context manager, registered as an SDK would: the provider below is one of its own.
  recorded = recordSpans();
});
afterEach(() => recorded.close());

/** ParentBased(TraceIdRatioBased(0)), telling the name of every span it is asked about. */
function droppingProvider() {
  const asked: string[] = [];
  const inner = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) });
  const sampler: Sampler = {
    shouldSample(
      parent: Context,
      traceId: string,
      name: string,
      kind: SpanKind,
      attributes: Attributes,
      links: Link[],
    ): SamplingResult {
      asked.push(name);
      return inner.shouldSample(parent, traceId, name, kind, attributes, links);
    },
    toString: () => 'counting',
  };
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, asked, exported: () => exporter.getFinishedSpans() };
}

describe('a delivery the sampler drops', () => {
  it('starts no span under it; a handler’s own span still continues its unsampled trace', async () => {
    const { provider, asked, exported } = droppingProvider();
    const receiver = createReceiver({
      secrets: SECRET,
      tracing: openTelemetry({ tracerProvider: provider }),
    });
    let active: { traceId: string; traceFlags: number } | undefined;
    receiver.on('message.delivered', () => {
      const context = trace.getActiveSpan()?.spanContext();
      active = context && { traceId: context.traceId, traceFlags: context.traceFlags };
      provider.getTracer('app').startSpan('app work').end();
    });
    const outcome = await receiver.receive(
      delivery(deliveredEvent(), { headers: { traceparent: UNSAMPLED } }),
    );
    const unsigned = await receiver.receive(delivery(deliveredEvent(), { header: null }));
    expect({ processed: outcome.status, unsigned: unsigned.status }).toEqual({
      processed: 200,
      unsigned: 401,
    });
    // The sampler is asked once per delivery, and once for the handler's own span: no verify, claim or handler.
    expect(asked).toEqual(['POST', 'app work', 'POST']);
    expect(active).toEqual({ traceId: INCOMING_TRACE, traceFlags: 0 });
    expect(exported()).toEqual([]);
  });

  it('under an unsampled server span of its trace (an HTTP instrumentation’s), its handlers stay in that trace', async () => {
    const { provider, asked } = droppingProvider();
    const receiver = createReceiver({
      secrets: SECRET,
      tracing: openTelemetry({ tracerProvider: provider }),
    });
    const seen: { traceId: string; traceFlags: number }[] = [];
    receiver.on('message.delivered', () => {
      const { traceId, traceFlags } = trace.getActiveSpan()?.spanContext() ?? { traceId: '', traceFlags: -1 };
      seen.push({ traceId, traceFlags });
    });
    const incoming = trace.setSpanContext(context.active(), {
      traceId: INCOMING_TRACE,
      spanId: '00f067aa0ba902b7',
      traceFlags: 0,
      isRemote: true,
    });
    const server = provider.getTracer('http').startSpan('POST', {}, incoming);
    const outcome = await context.with(trace.setSpan(incoming, server), () =>
      receiver.receive(delivery(deliveredEvent())),
    );
    server.end();
    expect(outcome.status).toBe(200);
    expect(asked).toEqual(['POST', 'POST']);
    expect(seen).toEqual([{ traceId: INCOMING_TRACE, traceFlags: 0 }]);
  });

  it('hands its unsampled context to a durable job, whose attempt then starts no span under it', () => {
    const { provider, asked } = droppingProvider();
    const tracing = openTelemetry({ tracerProvider: provider });
    const span = tracing.startDelivery({ method: 'POST', headers: { traceparent: UNSAMPLED } });
    if (span === undefined) throw new Error('a dropped delivery still carries its trace context');
    const handoff = span.child('handoff', 'producer');
    handoff.setAttributes({ 'messaging.system': 'bullmq' });
    const carrier = handoff.carrier();
    handoff.end();
    span.end();
    expect(carrier.traceparent).toMatch(new RegExp(`^00-${INCOMING_TRACE}-[\\da-f]{16}-00$`));
    const attempt = tracing.startJob({
      name: 'process webhooks',
      parent: carrier,
      links: [],
      attributes: {},
    });
    const handler = attempt.child('handler');
    expect(handler.inContext(() => trace.getActiveSpan()?.spanContext().traceId)).toBe(INCOMING_TRACE);
    handler.end();
    attempt.end();
    expect(asked).toEqual(['POST', 'process webhooks']);
  });

  it('gathers none of its answer to record: a span that does not record is only ended', async () => {
    const calls: string[] = [];
    const dropped: TraceSpan = {
      recording: false,
      setAttributes: () => calls.push('setAttributes'),
      child: () => dropped,
      inContext: (fn) => fn(),
      carrier: () => ({}),
      fail: () => calls.push('fail'),
      end: () => calls.push('end'),
    };
    const tracing: Tracing = { startDelivery: () => dropped, startJob: () => dropped };
    const receiver = createReceiver({ secrets: SECRET, tracing });
    receiver.on('message.delivered', () => {});
    expect((await receiver.receive(delivery(deliveredEvent()))).status).toBe(200);
    expect((await receiver.receive(delivery(deliveredEvent(), { header: null }))).status).toBe(401);
    expect(calls.filter((call) => call !== 'end')).toEqual([]);
  });
});
