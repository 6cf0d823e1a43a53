import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeRedisClient } from 'bullmq';
import { Registry } from 'prom-client';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reasonAnswers } from '../../src/contract/reasons.js';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import type { DurableWorker } from '../../src/index.js';
import { createReceiver } from '../../src/index.js';
import { registerMetrics, registerWorkerMetrics } from '../../src/observability/prometheus.js';
import { createEvent } from '../../src/testing.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { root } from '../support/build.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';
import {
  allPanels,
  type CheckOptions,
  dashboardProblems,
  dashboardQueries,
  parseExposition,
  parseQuery,
  queryProblems,
} from './grafana-queries.js';

/**
 * docs/grafana-dashboard.json against what registerMetrics and registerWorkerMetrics really expose: a receiver
 * handing events to a real BullMQ queue, a real worker running them (one job completed, one dead-lettered),
 * deliveries of several outcomes, a message tracker moved by a webhook, a reconciliation pass and a timeout, then
 * the registry's text as Prometheus scrapes it. Every series, label,
 * outcome and result the dashboard's queries name must be in it.
 */
const dashboard = JSON.parse(readFileSync(join(root, 'docs/grafana-dashboard.json'), 'utf8'));
const OUTCOMES = new Set(['processed', 'duplicate', 'accepted', ...Object.keys(reasonAnswers)]);
const { run } = testRun();
const prefix = `mw-test:${run}:bull`;

let text = '';
let options: CheckOptions;
let worker: DurableWorker | undefined;
const queue = bullmqQueue({
  connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
  prefix,
  name: 'dashboard',
  attempts: 1,
  countsIntervalMs: 100,
  // The shared test Redis runs without persistence.
  allowVolatileRedis: true,
  // For the 409 and duplicate series the dashboard charts.
  tellDuplicates: true,
});

/** A tracker through every source of transition and every reconciliation outcome. */
async function trackedMessages() {
  let now = Date.now();
  const tracker = createMessageTracker({ now: () => now, finalAfterMs: 60_000 });
  const data = (id: string) => ({ message_id: id, operator: 'op-a' });
  for (const id of ['m-hooked', 'm-lost', 'm-open', 'm-late', 'm-broken'])
    await tracker.expect(id, { sentAt: now });
  await tracker.observeEvent({
    type: 'message.delivered',
    created_at: new Date(now + 2000).toISOString(),
    data: data('m-hooked'),
  });
  const client = {
    async messageStatus(id: string) {
      if (id === 'm-broken') throw new Error('the service answered 500');
      const status = id === 'm-lost' ? ('failed' as const) : ('queued' as const);
      const at = new Date(now).toISOString();
      return { messageId: id, status, operator: 'op-a', to: undefined, history: [{ status, at }] };
    },
  };
  await tracker.reconcile({ client, olderThanMs: 0, limit: 2 });
  now += 60_000;
  await tracker.reconcile({ client, olderThanMs: 0 });
  return tracker;
}

beforeAll(async () => {
  const tracker = await trackedMessages();
  const receiver = createReceiver({ secrets: SECRET, queue, tracker });
  receiver.on('message.delivered', () => {});
  receiver.on('message.failed', () => {
    throw new Error('fails on purpose: its job goes to the dead-letter');
  });
  const event = deliveredEvent();
  expectAccepted(await receiver.receive(delivery(event)), 202);
  expectRejected(await receiver.receive(delivery(event)), 409, 'event_in_progress');
  expectAccepted(await receiver.receive(delivery(createEvent('message.failed'))), 202);
  expectRejected(await receiver.receive(delivery(event, { header: null })), 401, 'missing_signature');
  const forged = delivery(event, { secret: 'whsec_dashboard_not_the_secret_9d2e' });
  expectRejected(await receiver.receive(forged), 401, 'signature_mismatch');
  worker = await createBullmqWorker({ receiver, queue, concurrency: 2 });
  await until(() => receiver.metrics().durable?.deadLettered === 1);
  await until(async () => (await receiver.receive(delivery(event))).duplicate === true);

  const registry = new Registry();
  registerMetrics(receiver, { registry, tracker });
  registerWorkerMetrics(worker, { registry });
  text = await registry.metrics();
  const { exposed, valuesOf } = parseExposition(text);
  // A worker's series carry every result at all times (0 until one happens): what they show is all there is.
  const knownSeriesValues = Object.fromEntries(
    [...valuesOf].flatMap(([series, values]) => {
      const results = values.get('result');
      return results ? [[`${series}:result`, results]] : [];
    }),
  );
  options = {
    exposed,
    scrapeLabels: ['job', 'instance'],
    knownValues: { outcome: OUTCOMES },
    knownSeriesValues,
  };
});

afterAll(async () => {
  await worker?.close();
  await queue.close?.();
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await deleteKeys(redis, `${prefix}:*`);
  redis.destroy();
});

describe('docs/grafana-dashboard.json', () => {
  it('is a Grafana dashboard to import: schema 39, its data source a variable, every panel reading it', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard).toMatchObject({ uid: 'messaging-webhooks', title: 'messaging-webhooks' });
    const variables = dashboard.templating.list as { name: string; type: string; query: unknown }[];
    expect(variables[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
    const panels = allPanels(dashboard);
    const ids = panels.map((panel) => (panel as { id: number }).id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels.filter((one) => one.targets)) {
      expect((panel as { datasource: unknown }).datasource, panel.title).toEqual({
        type: 'prometheus',
        uid: `\${datasource}`, // Grafana's variable syntax, not a template literal's
      });
    }
    for (const panel of panels as { title: string; gridPos: { x: number; w: number } }[]) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
    }
    // Every $variable a query uses is one the dashboard defines (or one of Grafana's own, $__…).
    const names = new Set(variables.map((variable) => variable.name));
    const used = dashboardQueries(dashboard).flatMap(({ expr }) => [...expr.matchAll(/\$(\w+)/g)]);
    expect(
      used.map(([, name = '']) => name).filter((name) => !name.startsWith('__') && !names.has(name)),
    ).toEqual([]);
  });

  it('the traffic exposed every series the library has, with several outcomes', () => {
    const { exposed, valuesOf } = parseExposition(text);
    expect([...exposed.keys()].sort()).toEqual(
      [
        'requests_total',
        'request_duration_seconds_bucket',
        'request_duration_seconds_sum',
        'request_duration_seconds_count',
        'handlers_running',
        'queue_waiting',
        'durable_jobs_waiting',
        'durable_jobs_running',
        'durable_jobs_retrying',
        'durable_dead_letters',
        'worker_jobs_total',
        'worker_jobs_running',
        'worker_job_duration_seconds_bucket',
        'worker_job_duration_seconds_sum',
        'worker_job_duration_seconds_count',
        'message_receipt_latency_seconds_bucket',
        'message_receipt_latency_seconds_sum',
        'message_receipt_latency_seconds_count',
        'messages_open',
        'message_transitions_total',
        'reconciled_messages_total',
      ]
        .map((name) => `messaging_webhooks_${name}`)
        .sort(),
    );
    const outcomes = (series: string) => [
      ...(valuesOf.get(`messaging_webhooks_${series}`)?.get('outcome') ?? []),
    ];
    expect(outcomes('reconciled_messages_total').sort()).toEqual([
      'failed',
      'moved',
      'still_open',
      'unknown',
    ]);
    for (const source of ['expect', 'webhook', 'reconcile', 'timeout'])
      expect(text).toMatch(
        new RegExp(`messaging_webhooks_message_transitions_total\\{source="${source}"\\} [1-9]`),
      );
    expect(outcomes('requests_total').sort()).toEqual(
      ['accepted', 'duplicate', 'event_in_progress', 'missing_signature', 'signature_mismatch'].sort(),
    );
    expect(text).toContain('messaging_webhooks_durable_dead_letters 1\n');
    expect(text).toContain('messaging_webhooks_worker_jobs_total{result="completed"} 1\n');
    expect(text).toContain('messaging_webhooks_worker_jobs_total{result="dead_lettered"} 1\n');
    expect(text).toContain('messaging_webhooks_worker_job_duration_seconds_count{result="failed"} 1\n');
    const results = Object.fromEntries(
      Object.entries(options.knownSeriesValues ?? {}).map(([key, values]) => [key, [...values].sort()]),
    );
    const runResults = ['completed', 'failed'];
    expect(results).toEqual({
      'messaging_webhooks_worker_jobs_total:result': ['completed', 'dead_lettered', 'retried'],
      'messaging_webhooks_worker_job_duration_seconds_bucket:result': runResults,
      'messaging_webhooks_worker_job_duration_seconds_sum:result': runResults,
      'messaging_webhooks_worker_job_duration_seconds_count:result': runResults,
    });
  });

  it('queries only series, labels and outcomes the registry exposes, in panels, rows and variables', () => {
    const queries = dashboardQueries(dashboard);
    expect(queries.length).toBeGreaterThan(20);
    expect(queries.some((query) => query.where.startsWith('variable'))).toBe(true);
    expect(dashboardProblems(dashboard, options)).toEqual([]);
  });

  it('shows every series the library exposes', () => {
    const read = new Set(
      dashboardQueries(dashboard).flatMap(({ expr }) => parseQuery(expr).selectors.map((s) => s.metric)),
    );
    expect([...options.exposed.keys()].filter((name) => !read.has(name))).toEqual([]);
  });
});

describe('the check itself', () => {
  it('takes a query apart: series, matchers, grouping labels and label_values', () => {
    const parsed = parseQuery(
      'histogram_quantile(0.95, sum by (le, outcome) (rate(a_bucket{job=~"$job",x!="}"}[$__rate_interval]))) / b',
    );
    expect(parsed.selectors).toEqual([
      {
        metric: 'a_bucket',
        matchers: [
          { label: 'job', op: '=~', value: '$job' },
          { label: 'x', op: '!=', value: '}' },
        ],
      },
      { metric: 'b', matchers: [] },
    ]);
    expect(parsed.grouping).toEqual(['le', 'outcome']);
    expect(parseQuery('label_values(m{job="a"}, instance)')).toMatchObject({ listed: 'instance' });
    expect(() => parseQuery('sum(m{job})')).toThrow(/cannot read the matcher/);
  });

  it('finds a wrong series name, label, outcome and legend label in a query', () => {
    const wrong = {
      where: 'inline',
      expr: 'sum by (outcom) (rate(messaging_webhooks_request_total{status="200"}[5m])) + sum(rate(messaging_webhooks_requests_total{reason="overloaded",outcome=~"processed|signature_failed"}[5m]))',
      legendFormat: '{{status}}',
    };
    expect(queryProblems(wrong, options)).toEqual([
      'inline: no series messaging_webhooks_request_total',
      'inline: messaging_webhooks_requests_total has no label reason',
      'inline: outcome="signature_failed" is never exposed',
      'inline: groups by outcom, not on every series it reads',
      'inline: legend prints {{status}}, which the result does not carry',
    ]);
  });

  it('finds a result a worker series never takes, though another series takes it', () => {
    const wrong = {
      where: 'inline',
      expr: 'sum(rate(messaging_webhooks_worker_jobs_total{result="failed"}[5m])) + sum(rate(messaging_webhooks_worker_job_duration_seconds_count{result=~"completed|retried"}[5m]))',
    };
    expect(queryProblems(wrong, options)).toEqual([
      'inline: result="failed" is never exposed',
      'inline: result="retried" is never exposed',
    ]);
  });

  it('finds a wrong name inside a collapsed row and in a variable query', () => {
    const broken = JSON.parse(
      JSON.stringify(dashboard)
        .replace('messaging_webhooks_durable_dead_letters', 'messaging_webhooks_dead_letters_total')
        .replaceAll(
          'label_values(messaging_webhooks_requests_total, job)',
          'label_values(messaging_webhooks_requests_total, app)',
        ),
    );
    expect(dashboardProblems(broken, options)).toEqual([
      'panel "Dead letters" query A: no series messaging_webhooks_dead_letters_total',
      'variable $job: lists app, not a label of its series',
    ]);
  });
});
