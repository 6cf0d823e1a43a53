import { expectTypeOf, test } from 'vitest';
import { createBullmqWorker } from '../../src/durable/bullmq/index.js';
import type { TraceSpan, Tracing } from '../../src/extend.js';
import { createReceiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';

test('openTelemetry() is what the tracing options take', () => {
  expectTypeOf(openTelemetry()).toEqualTypeOf<Tracing>();
  expectTypeOf(createReceiver).parameter(0).toHaveProperty('tracing').toEqualTypeOf<Tracing | undefined>();
  expectTypeOf(createBullmqWorker)
    .parameter(0)
    .toHaveProperty('tracing')
    .toEqualTypeOf<Tracing | undefined>();
  // @ts-expect-error a tracer is not a Tracing: openTelemetry({ tracer }) makes one
  createReceiver({ secrets: 'whsec_types', tracing: { startSpan: () => undefined } });
});

test('a delivery may get no span (no tracer provider), a job always gets one', () => {
  expectTypeOf<ReturnType<Tracing['startDelivery']>>().toEqualTypeOf<TraceSpan | undefined>();
  expectTypeOf<ReturnType<Tracing['startJob']>>().toEqualTypeOf<TraceSpan>();
});
