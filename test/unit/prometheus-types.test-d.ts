import { Registry } from 'prom-client';
import { describe, expectTypeOf, it } from 'vitest';
import type { DurableWorker, RunDurations } from '../../src/index.js';
import { createReceiver } from '../../src/index.js';
import { registerMetrics, registerWorkerMetrics } from '../../src/observability/prometheus.js';

declare const worker: DurableWorker;

describe('messaging-webhooks/prometheus types', () => {
  it('registers a receiver with registerMetrics and a worker with registerWorkerMetrics, not the other way', () => {
    const registry = new Registry();
    const receiver = createReceiver({ secrets: 'whsec_x' });
    registerMetrics(receiver, { registry });
    registerWorkerMetrics(worker, { registry, prefix: 'hooks_', labels: { queue: 'sms' } });
    // @ts-expect-error a worker has counters(), not the receiver's metrics()
    registerMetrics(worker, { registry });
    // @ts-expect-error a receiver has no counters(): its series come from registerMetrics
    registerWorkerMetrics(receiver, { registry });
    // @ts-expect-error label values are strings
    registerWorkerMetrics(worker, { registry, labels: { queue: 1 } });
  });

  it("a worker's counters carry its run-time histogram, which an engine of your own may leave out", () => {
    expectTypeOf(worker.counters().durations).toEqualTypeOf<RunDurations | undefined>();
    expectTypeOf(worker.counters().durations?.failed.buckets).toEqualTypeOf<number[] | undefined>();
  });
});
