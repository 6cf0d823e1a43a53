import { createNodeRedisClient } from 'bullmq';
import { Registry } from 'prom-client';
import { createClient } from 'redis';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createPgBossWorker, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import type { DurableQueue, DurableWorker } from '../../src/index.js';
import { createReceiver, type Receiver, WebhookConfigError } from '../../src/index.js';
import { registerWorkerMetrics } from '../../src/observability/prometheus.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { DATABASE_URL, dropSchema, REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { delivery, expectAccepted, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

/**
 * registerWorkerMetrics on real workers and prom-client's real registry: what Prometheus scrapes follows the
 * jobs the worker runs, completes, retries and dead-letters, for several workers on one registry.
 */
const { run } = testRun();
const prefix = `mw-test:${run}:bull`;
const schema = `mw_boss_${run}`;
const closers: (() => Promise<unknown>)[] = [];
/** How long the handler of the first test runs, on the clock the test moves. */
const RUN_MS = 30;

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await deleteKeys(redis, `${prefix}:*`);
  redis.destroy();
  await dropSchema(schema);
});

const bullmq = (name: string) =>
  bullmqQueue({
    connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
    prefix,
    name,
    attempts: 2,
    backoffMs: 50,
    // The shared test Redis runs without persistence.
    allowVolatileRedis: true,
  });

async function started<Q extends DurableQueue>(
  queue: Q,
  createWorker: (options: { receiver: Receiver; queue: Q }) => Promise<DurableWorker>,
) {
  closers.push(() => queue.close?.() ?? Promise.resolve());
  const receiver = createReceiver({ secrets: SECRET, queue });
  const worker = await createWorker({ receiver, queue });
  closers.push(() => worker.close());
  return { receiver, worker };
}

/** One sample's value in the text Prometheus scrapes, or undefined when the series is not there. */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((one) => one.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('registerWorkerMetrics on a BullMQ worker', () => {
  it('exposes jobs by result, the jobs running and the run times, read at scrape time', async () => {
    const { receiver, worker } = await started(bullmq('metrics'), createBullmqWorker);
    const held = gate();
    // Run times are read from performance.now(): the test fakes only that clock (timers and I/O stay real), and
    // the handler moves it by 30 ms, so the run time recorded is exactly what the handler spent.
    vi.useFakeTimers({ toFake: ['performance'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    receiver.on('message.delivered', async () => {
      await held.opened;
      vi.advanceTimersByTime(RUN_MS);
    });
    receiver.on('message.failed', () => {
      throw new Error('fails on purpose: retried once, then dead-lettered');
    });
    const registry = new Registry();
    registerWorkerMetrics(worker, { registry, labels: { queue: 'metrics' } });
    const scrape = () => registry.metrics();
    const jobs = (result: string) =>
      `messaging_webhooks_worker_jobs_total{queue="metrics",result="${result}"}`;
    const runs = (series: string, result: string, le?: string) =>
      `messaging_webhooks_worker_job_duration_seconds_${series}{queue="metrics",result="${result}"${le ? `,le="${le}"` : ''}}`;

    let text = await scrape();
    expect(text).toContain('# TYPE messaging_webhooks_worker_jobs_total counter');
    expect(text).toContain('# TYPE messaging_webhooks_worker_jobs_running gauge');
    expect(text).toContain('# TYPE messaging_webhooks_worker_job_duration_seconds histogram');
    for (const result of ['completed', 'retried', 'dead_lettered'])
      expect(sample(text, jobs(result))).toBe(0);
    expect(sample(text, runs('count', 'failed'))).toBe(0);

    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))), 202);
    await until(() => worker.counters().running === 1);
    expect(sample(await scrape(), 'messaging_webhooks_worker_jobs_running{queue="metrics"}')).toBe(1);
    held.open();
    await until(() => worker.counters().completed === 1);
    text = await scrape();
    expect(sample(text, jobs('completed'))).toBe(1);
    expect(sample(text, 'messaging_webhooks_worker_jobs_running{queue="metrics"}')).toBe(0);
    expect(sample(text, runs('bucket', 'completed', '0.025'))).toBe(0);
    expect(sample(text, runs('bucket', 'completed', '0.05'))).toBe(1);
    expect(sample(text, runs('bucket', 'completed', '+Inf'))).toBe(1);
    expect(sample(text, runs('count', 'completed'))).toBe(1);
    expect(sample(text, runs('sum', 'completed'))).toBeCloseTo(RUN_MS / 1000, 9);

    expectAccepted(await receiver.receive(delivery(createEvent('message.failed'))), 202);
    await until(() => worker.counters().deadLettered === 1);
    text = await scrape();
    expect(sample(text, jobs('retried'))).toBe(1);
    expect(sample(text, jobs('dead_lettered'))).toBe(1);
    expect(sample(text, runs('count', 'failed'))).toBe(2);
    expect(sample(text, runs('bucket', 'failed', '+Inf'))).toBe(2);
  });

  it('takes several workers on one registry when their labels differ, and says so when they do not', async () => {
    const sms = await started(bullmq('sms'), createBullmqWorker);
    const mms = await started(bullmq('mms'), createBullmqWorker);
    sms.receiver.on('message.delivered', () => {});
    const registry = new Registry();
    registerWorkerMetrics(sms.worker, { registry, labels: { queue: 'sms' } });
    registerWorkerMetrics(mms.worker, { registry, labels: { queue: 'mms' } });
    expect(() => registerWorkerMetrics(mms.worker, { registry, labels: { queue: 'sms' } })).toThrow(
      WebhookConfigError,
    );
    expect(() => registerWorkerMetrics(mms.worker, { registry, labels: { queue: 'sms' } })).toThrow(
      /already exposes messaging_webhooks_worker_jobs_total in this registry: give each worker distinct labels/,
    );

    expectAccepted(await sms.receiver.receive(delivery(createEvent('message.delivered'))), 202);
    await until(() => sms.worker.counters().completed === 1);
    const text = await registry.metrics();
    expect(sample(text, 'messaging_webhooks_worker_jobs_total{queue="sms",result="completed"}')).toBe(1);
    expect(sample(text, 'messaging_webhooks_worker_jobs_total{queue="mms",result="completed"}')).toBe(0);
    expect(sample(text, 'messaging_webhooks_worker_jobs_running{queue="mms"}')).toBe(0);
    // One family per name, as Prometheus requires: each worker adds its series to it.
    expect(text.match(/# TYPE messaging_webhooks_worker_jobs_total /g)).toHaveLength(1);
    expect((await registry.getMetricsAsJSON()).map((metric) => metric.name)).toEqual([
      'messaging_webhooks_worker_jobs_total',
      'messaging_webhooks_worker_jobs_running',
      'messaging_webhooks_worker_job_duration_seconds',
    ]);

    // A registry cleared is empty again: the next worker starts the series afresh.
    registry.clear();
    registerWorkerMetrics(sms.worker, { registry, labels: { queue: 'sms' } });
    expect(sample(await registry.metrics(), 'messaging_webhooks_worker_jobs_running{queue="mms"}')).toBe(
      undefined,
    );
  });

  it('checks the options when registering: registry, prefix and labels', async () => {
    const { worker } = await started(bullmq('options'), createBullmqWorker);
    const registry = new Registry();
    const wrong: [object, RegExp][] = [
      [{}, /registry must be a prom-client Registry/],
      [
        { registry, prefix: '9lives_' },
        /prefix must be the start of a Prometheus metric name.*got "9lives_"/,
      ],
      [{ registry, labels: { 'queue-name': 'sms' } }, /"queue-name" cannot be a label name/],
      [{ registry, labels: { result: 'x' } }, /"result" cannot be a label name.*none of result, le/],
      [{ registry, labels: { queue: 7 } }, /labels\.queue must be a string, got 7\./],
    ];
    for (const [options, message] of wrong) {
      expect(() => registerWorkerMetrics(worker, options as never)).toThrow(message);
    }
    expect(await registry.getMetricsAsJSON()).toEqual([]);
    registerWorkerMetrics(worker, { registry, prefix: 'hooks_' });
    expect(await registry.metrics()).toContain('hooks_worker_jobs_total{result="completed"} 0\n');
  });
});

describe('registerWorkerMetrics on a pg-boss worker', () => {
  it('counts its completed jobs and times their runs', async () => {
    const queue = pgBossQueue({ connectionString: DATABASE_URL, schema, name: 'metrics', attempts: 1 });
    const { receiver, worker } = await started(queue, (options) =>
      createPgBossWorker({ ...options, pollingIntervalSeconds: 0.5 }),
    );
    receiver.on('message.delivered', () => {});
    const registry = new Registry();
    registerWorkerMetrics(worker, { registry });
    expectAccepted(await receiver.receive(delivery(createEvent('message.delivered'))), 202);
    await until(() => worker.counters().completed === 1);
    const text = await registry.metrics();
    expect(sample(text, 'messaging_webhooks_worker_jobs_total{result="completed"}')).toBe(1);
    expect(sample(text, 'messaging_webhooks_worker_jobs_running')).toBe(0);
    expect(sample(text, 'messaging_webhooks_worker_job_duration_seconds_count{result="completed"}')).toBe(1);
  });
});
