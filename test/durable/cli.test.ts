import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { bullmqQueue, createBullmqWorker as createWorker } from '../../src/durable/bullmq/index.js';
import type { DurableWorker } from '../../src/index.js';
import { createReceiver } from '../../src/index.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, SECRET, start, startServer, type TestServer } from '../support/child-processes.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { until } from '../support/until.js';

/* The CLI's go-live check and simulate against a receiver in durable mode (BullMQ), with a worker. */
const { run } = testRun();
const prefix = `mw-test:${run}:bull`;
const queue = bullmqQueue({
  connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
  prefix,
  name: 'cli',
  backoffMs: 50,
  // The shared test Redis runs without persistence; the persistence check has its own test.
  allowVolatileRedis: true,
});
const receiver = createReceiver({ secrets: SECRET, queue });
const ran = new Set<string>();
receiver.on('message.delivered', (event) => {
  ran.add(event.id as string);
});
const exampleQueue = `mw-test-${run}-example`;
let server: TestServer;
let worker: DurableWorker;

beforeAll(async () => {
  await ensureBuilt();
  server = await startServer(createNodeHandler(receiver));
  worker = await createWorker({ receiver, queue, concurrency: 8 });
}, 180_000);

afterAll(async () => {
  await server.close();
  await worker.close();
  await queue.close();
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await deleteKeys(redis, `${prefix}:*`);
  await deleteKeys(redis, `bull:${exampleQueue}:*`);
  redis.destroy();
});

it('check passes against a durable receiver: 202 for the valid event and for its copy (BullMQ keeps one job)', async () => {
  const result = await runCli(['check', server.url, '--secret', SECRET, '--json']);
  const report = JSON.parse(result.stdout) as { passed: boolean; checks: { id: string; status: number }[] };
  expect(report.passed).toBe(true);
  const byId = Object.fromEntries(report.checks.map((check) => [check.id, check.status]));
  expect(byId.valid).toBe(202);
  expect(byId.duplicate).toBe(202);
  expect(result.code).toBe(0);
});

it('simulate delivers every event to a durable receiver, and the worker runs each once', async () => {
  ran.clear();
  const result = await runCli([
    'simulate',
    server.url,
    '--secret',
    SECRET,
    '--events',
    '200',
    '--duplicates',
    '0.3',
    '--shuffle',
    '--json',
  ]);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ events: 200, unacknowledged: 0 });
  await until(() => ran.size === 200);
  expect(worker.counters()).toMatchObject({ retried: 0, deadLettered: 0 });
});

it('examples/workers: the receiver and a worker, one command each, pass the check and run the event', async () => {
  const env = {
    PORT: '0',
    WEBHOOK_SECRET: SECRET,
    QUEUE: exampleQueue,
    REDIS_URL,
    ALLOW_VOLATILE_REDIS: '1',
  };
  const worker = start([process.execPath, 'examples/workers/worker.mjs'], env);
  const receiver = start([process.execPath, 'examples/workers/receiver.mjs'], env);
  try {
    await worker.waitFor(/Worker running/);
    const [url] = await receiver.waitFor(/http:\/\/localhost:\d+\/webhooks\b/);
    const result = await runCli(['check', url, '--secret', SECRET, '--json']);
    expect(JSON.parse(result.stdout).passed).toBe(true);
    await worker.waitFor(/message\.delivered evt_\w+: msg_\w+ delivered to/);
    expect(worker.output() + receiver.output()).not.toContain(SECRET);
  } finally {
    await Promise.all([receiver.stop(), worker.stop()]);
  }
}, 60_000);
