import { fileURLToPath } from 'node:url';
import { SpanKind } from '@opentelemetry/api';
import { createNodeRedisClient } from 'bullmq';
import express from 'express';
import { createClient } from 'redis';
import request from 'supertest';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { bullmqQueue } from '../../src/durable/bullmq/index.js';
import { createReceiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { buildPackage } from '../support/harness/build.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { startProcess } from '../support/harness/processes.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { type Recorded, recordSpans } from '../support/tracing.js';
import { until } from '../support/until.js';

const WORKER = fileURLToPath(new URL('./fixtures/traced-worker.mjs', import.meta.url));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const { run, secret } = testRun();
const prefix = `mw-test:${run}:traced-fleet`;
const spansKey = `${prefix}:spans`;

/** A span as a worker process exported it. */
interface WorkerSpan {
  worker: string;
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parent?: string;
  links: string[];
  attributes: Record<string, unknown>;
}

const redis = createClient({ url: REDIS_URL });
redis.on('error', () => {});
let recorded: Recorded;
beforeEach(async () => {
  recorded = recordSpans();
  if (!redis.isOpen) await redis.connect();
});
afterEach(() => recorded.close());
afterAll(async () => {
  await deleteKeys(redis, `${prefix}:*`);
  redis.destroy();
});

const workerSpans = async () =>
  (await redis.lRange(spansKey, 0, -1)).map((line) => JSON.parse(line) as WorkerSpan);
const consumers = async (worker: string) =>
  (await workerSpans()).filter((span) => span.kind === SpanKind.CONSUMER && span.worker === worker);

it('one trace from the Express receiver to two worker processes: the retry in the other process links to the attempts before', async () => {
  const dist = await buildPackage();
  const name = 'traced';
  const engine = { prefix, name, attempts: 6, backoffMs: 300 };
  const queue = bullmqQueue({
    connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
    ...engine,
    allowVolatileRedis: true,
  });
  const receiver = createReceiver({
    secrets: secret,
    queue,
    tracing: openTelemetry({ tracerProvider: recorded.provider }),
  });
  const app = express();
  app.post('/webhooks', webhookHandler(receiver));
  const delivery = createSignedRequest(createEvent('message.delivered'), { secret });
  const signature = delivery.headers['webhook-signature'] as string;
  const response = await request(app)
    .post('/webhooks')
    .set({ ...delivery.headers, traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` })
    .send(delivery.body);
  expect(response.status).toBe(202);
  const server = recorded.span('POST /webhooks');
  const handoff = recorded.span('handoff');
  expect(server.spanContext().traceId).toBe(TRACE_ID);

  // Worker a fails the job's attempts until it is stopped; worker b, started after, completes it.
  const common = { ...engine, dist, secret, redisUrl: REDIS_URL, spans: spansKey };
  const failing = await startProcess(WORKER, { ...common, worker: 'a', fail: true });
  try {
    await until(async () => (await consumers('a')).length > 0, { what: "worker a's first attempt" });
  } finally {
    await failing.stop();
  }
  const completing = await startProcess(WORKER, { ...common, worker: 'b', fail: false });
  try {
    await until(async () => (await consumers('b')).length > 0, { what: "worker b's attempt" });
  } finally {
    await completing.stop();
  }
  await receiver.close();
  await queue.close();

  const earlier = await consumers('a');
  const [last] = (await consumers('b')) as [WorkerSpan];
  for (const attempt of [...earlier, last]) {
    expect(attempt).toMatchObject({
      name: `process ${name}`,
      traceId: TRACE_ID,
      parent: handoff.spanContext().spanId,
      attributes: { 'messaging.system': 'bullmq', 'messaging.message.id': JSON.parse(delivery.body).id },
    });
  }
  expect(earlier.map((span) => span.attributes['messaging_webhooks.outcome'])).toEqual(
    earlier.map(() => 'retried'),
  );
  expect(last.attributes).toMatchObject({
    'messaging_webhooks.outcome': 'completed',
    'messaging_webhooks.attempt': earlier.length + 1,
  });
  // Each attempt's span context went to Redis with the job, so a process that never saw them links to them.
  expect(last.links).toEqual(earlier.map((span) => span.spanId));
  const spans = await workerSpans();
  const handler = spans.find((span) => span.name === 'handler' && span.parent === last.spanId);
  expect(handler).toMatchObject({ worker: 'b', traceId: TRACE_ID });
  expect(spans.find((span) => span.name === 'app work')).toMatchObject({
    worker: 'b',
    traceId: TRACE_ID,
    parent: handler?.spanId,
  });
  const texts = JSON.stringify(spans);
  expect(texts).not.toContain(secret);
  expect(texts).not.toContain(signature);
});
