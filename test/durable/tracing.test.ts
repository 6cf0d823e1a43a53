import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createPgBossWorker, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import type { Tracing } from '../../src/extend.js';
import type { DurableQueue, DurableWorker } from '../../src/index.js';
import { createReceiver, type Receiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { gate } from '../support/gate.js';
import { DATABASE_URL, dropSchema, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { expectChild, type Recorded, recordSpans, spanTexts } from '../support/tracing.js';
import { deliveredEvent, delivery, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

const { run } = testRun();
const TRACE_ID = '5c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f';
const TRACEPARENT = `00-${TRACE_ID}-1a2b3c4d5e6f7a8b-01`;

interface Engine {
  system: string;
  queue(name: string): DurableQueue;
  worker(receiver: Receiver, queue: DurableQueue, tracing: Tracing): Promise<DurableWorker>;
  cleanup(): Promise<void>;
}

const prefix = `mw-test:${run}:trace`;
const schema = `mw_trace_${run}`;

const engines: Engine[] = [
  {
    system: 'bullmq',
    queue: (name) =>
      bullmqQueue({
        connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
        prefix,
        name,
        attempts: 2,
        backoffMs: 50,
        allowVolatileRedis: true,
      }),
    worker: (receiver, queue, tracing) =>
      createBullmqWorker({ receiver, queue: queue as never, concurrency: 1, tracing }),
    async cleanup() {
      const redis = createClient({ url: REDIS_URL });
      await redis.connect();
      await deleteKeys(redis, `${prefix}:*`);
      redis.destroy();
    },
  },
  {
    system: 'pg-boss',
    queue: (name) =>
      pgBossQueue({ connectionString: DATABASE_URL, schema, name, attempts: 2, backoffMs: 1000 }),
    worker: (receiver, queue, tracing) =>
      createPgBossWorker({
        receiver,
        queue: queue as never,
        concurrency: 1,
        pollingIntervalSeconds: 0.5,
        tracing,
      }),
    async cleanup() {
      await dropSchema(schema);
    },
  },
];

let recorded: Recorded;
beforeEach(() => {
  recorded = recordSpans();
});
afterEach(() => recorded.close());

describe.each(engines)('a traced delivery handed to $system', (engine) => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(() => engine.cleanup());

  it('goes on in the worker: same trace, the attempt under the handoff, a retry linked to the attempt before', async () => {
    const name = `q${Date.now().toString(36)}`;
    const tracing = openTelemetry({ tracerProvider: recorded.provider });
    const queue = engine.queue(name);
    closers.push(() => queue.close?.() ?? Promise.resolve());
    const receiver = createReceiver({ secrets: SECRET, queue, tracing });
    const ran = gate();
    let runs = 0;
    receiver.on('message.delivered', () => {
      if (++runs === 1) throw new Error('first attempt fails');
      recorded.provider.getTracer('app').startSpan('app work').end();
      ran.open();
    });
    const event = deliveredEvent();
    const request = delivery(event, { headers: { traceparent: TRACEPARENT } });
    expect((await receiver.receive(request)).status).toBe(202);

    const worker = await engine.worker(receiver, queue, tracing);
    closers.push(() => worker.close());
    await ran.opened;
    const consumers = () => recorded.spans().filter((span) => span.kind === SpanKind.CONSUMER);
    await until(() => consumers().length === 2, { what: 'the spans of both attempts' });

    const server = recorded.span('POST');
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 202,
      'messaging_webhooks.ack': 'durable',
      'messaging_webhooks.outcome': 'accepted',
    });
    const handoff = recorded.span('handoff');
    expectChild(handoff, server, SpanKind.PRODUCER);
    expect(handoff.attributes).toMatchObject({
      'messaging.system': engine.system,
      'messaging.operation.type': 'send',
      'messaging.message.id': event.id,
      'messaging_webhooks.outcome': 'accepted',
    });

    const [first, second] = consumers().sort(
      (a, b) =>
        Number(a.attributes['messaging_webhooks.attempt']) -
        Number(b.attributes['messaging_webhooks.attempt']),
    ) as [ReadableSpan, ReadableSpan];
    for (const [attempt, span] of [first, second].entries()) {
      expect(span.name).toBe(`process ${name}`);
      expectChild(span, handoff, SpanKind.CONSUMER);
      expect(span.attributes).toMatchObject({
        'messaging.system': engine.system,
        'messaging.operation.type': 'process',
        'messaging.destination.name': name,
        'messaging.message.id': event.id,
        'messaging_webhooks.event.type': 'message.delivered',
        'messaging_webhooks.attempt': attempt + 1,
        'messaging_webhooks.attempts': 2,
      });
    }
    expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_failed' });
    expect(first.attributes['messaging_webhooks.outcome']).toBe('retried');
    expect(first.links).toEqual([]);
    expect(second.attributes['messaging_webhooks.outcome']).toBe('completed');
    expect(second.links.map((link) => link.context.spanId)).toEqual([first.spanContext().spanId]);

    const handlers = recorded.spans().filter((span) => span.name === 'handler');
    expect(handlers).toHaveLength(2);
    const lastHandler = handlers.find(
      (span) => span.parentSpanContext?.spanId === second.spanContext().spanId,
    ) as ReadableSpan;
    expectChild(lastHandler, second, SpanKind.INTERNAL);
    expectChild(recorded.span('app work'), lastHandler, SpanKind.INTERNAL);

    const texts = spanTexts(recorded.spans());
    expect(texts).not.toContain(SECRET);
    expect(texts).not.toContain((request.headers as Record<string, string>)['webhook-signature']);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
