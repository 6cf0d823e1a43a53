import { context, propagation, type SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';

/**
 * The real OpenTelemetry SDK, recording in memory: a tracer provider to hand openTelemetry(), and the global
 * context manager an app registers (without one no span is ever active, and handlers' spans nest nowhere).
 */
export function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const spans = () => exporter.getFinishedSpans();
  return {
    provider,
    spans,
    reset: () => exporter.reset(),
    /** The one finished span of that name (of `traceId` when given). */
    span(name: string, traceId?: string): ReadableSpan {
      const found = spans().filter(
        (span) => span.name === name && (traceId === undefined || span.spanContext().traceId === traceId),
      );
      expect(found.map((span) => span.name)).toEqual([name]);
      return found[0] as ReadableSpan;
    },
    async close() {
      await provider.shutdown();
      context.disable();
      trace.disable();
      propagation.disable();
    },
  };
}

export type Recorded = ReturnType<typeof recordSpans>;

/** `child`'s parent is `parent`, in the same trace, with that kind. */
export function expectChild(child: ReadableSpan, parent: ReadableSpan, kind: SpanKind): void {
  expect({
    name: child.name,
    kind: child.kind,
    traceId: child.spanContext().traceId,
    parent: child.parentSpanContext?.spanId,
  }).toEqual({
    name: child.name,
    kind,
    traceId: parent.spanContext().traceId,
    parent: parent.spanContext().spanId,
  });
}

/** Every text a span holds: its name, attributes, status, events and links, for a scan of what must not be there. */
export function spanTexts(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events,
      links: span.links,
      resource: span.resource.attributes,
    })),
  );
}
