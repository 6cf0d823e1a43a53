import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import type { MetricsSnapshot } from '../../src/observability/metrics.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { delivery, SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

const seriesOf = (snapshot: MetricsSnapshot, outcome: string, eventType: string) =>
  snapshot.series.find((series) => series.outcome === outcome && series.eventType === eventType);

/** How long each message.delivered handler runs on the clock the test moves (performance.now, nothing else). */
const HANDLER_MS = 30;

// The clock durations are read from is the test's: it moves only when a handler moves it, so a duration is
// what the handler spent, exactly, however busy the machine. Timers stay real.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function traffic() {
  const receiver = createReceiver({ secrets: SECRET });
  receiver.on('message.delivered', async () => {
    vi.advanceTimersByTime(HANDLER_MS);
  });
  receiver.on('message.failed', () => {
    throw new Error('boom');
  });
  const delivered = createEvent('message.delivered');
  await receiver.receive(delivery(delivered));
  await receiver.receive(delivery(createEvent('message.delivered')));
  await receiver.receive(delivery(delivered));
  await receiver.receive(delivery(createEvent('message.failed')));
  await receiver.receive({ ...delivery(delivered), headers: { 'content-type': 'application/json' } });
  return receiver;
}

describe('receiver.metrics()', () => {
  it('counts and times requests per outcome and event type', async () => {
    const snapshot = (await traffic()).metrics();
    const processed = seriesOf(snapshot, 'processed', 'message.delivered');
    expect(processed).toMatchObject({ status: 200, count: 2 });
    expect(seriesOf(snapshot, 'duplicate', 'message.delivered')).toMatchObject({ status: 200, count: 1 });
    expect(seriesOf(snapshot, 'handler_failed', 'message.failed')).toMatchObject({ status: 500, count: 1 });
    // Rejected before the event was parsed: no event type.
    expect(seriesOf(snapshot, 'missing_signature', '')).toMatchObject({ status: 401, count: 1 });
    expect(snapshot.series).toHaveLength(4);
    expect(snapshot.queue).toEqual({ running: 0, waiting: 0 });

    // Each handler ran 30 ms of the test's clock: both processed requests are in the 50 ms bucket, none below.
    const bounds = snapshot.bucketBounds;
    const buckets = processed?.durationBuckets as number[];
    expect(buckets).toHaveLength(bounds.length + 1);
    expect(buckets[bounds.indexOf(0.025)]).toBe(0);
    expect(buckets[bounds.indexOf(0.05)]).toBe(2);
    expect(buckets.at(-1)).toBe(2);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(processed?.durationSecondsSum).toBeCloseTo((2 * HANDLER_MS) / 1000, 9);
  });

  it('shows handlers running and events waiting right now', async () => {
    const receiver = createReceiver({ secrets: SECRET, concurrency: 1 });
    const held = gate();
    receiver.on('message.delivered', () => held.opened);
    const answers = [1, 2, 3].map(() => receiver.receive(delivery(createEvent('message.delivered'))));
    await until(() => receiver.metrics().queue.waiting === 2);
    expect(receiver.metrics().queue).toEqual({ running: 1, waiting: 2 });
    held.open();
    await Promise.all(answers);
    expect(receiver.metrics().queue).toEqual({ running: 0, waiting: 0 });
  });

  it('past 64 event types, new types are counted as "other"', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    for (let i = 0; i < 70; i++) {
      await receiver.receive(delivery({ ...createEvent('message.delivered'), type: `custom.type_${i}` }));
    }
    const types = receiver.metrics().series.map((series) => series.eventType);
    expect(types).toHaveLength(65);
    expect(seriesOf(receiver.metrics(), 'processed', 'other')?.count).toBe(6);
  });
});

describe('messaging-webhooks/prometheus', () => {
  it('exposes counters, the duration histogram and queue gauges in the text format, read at scrape time', async () => {
    const receiver = await traffic();
    const registry = new Registry();
    registerMetrics(receiver, { registry });
    const text = await registry.metrics();
    const processed = 'outcome="processed",status="200",event_type="message.delivered"';
    expect(text).toContain('# TYPE messaging_webhooks_requests_total counter');
    expect(text).toContain(`messaging_webhooks_requests_total{${processed}} 2\n`);
    expect(text).toContain(
      'messaging_webhooks_requests_total{outcome="missing_signature",status="401",event_type=""} 1\n',
    );
    expect(text).toContain('# TYPE messaging_webhooks_request_duration_seconds histogram');
    expect(text).toContain(`messaging_webhooks_request_duration_seconds_bucket{${processed},le="0.025"} 0\n`);
    expect(text).toContain(`messaging_webhooks_request_duration_seconds_bucket{${processed},le="+Inf"} 2\n`);
    expect(text).toMatch(
      new RegExp(`messaging_webhooks_request_duration_seconds_sum\\{${processed}\\} 0\\.\\d+\\n`),
    );
    expect(text).toContain(`messaging_webhooks_request_duration_seconds_count{${processed}} 2\n`);
    expect(text).toContain(
      '# TYPE messaging_webhooks_handlers_running gauge\nmessaging_webhooks_handlers_running 0',
    );
    expect(text).toContain('messaging_webhooks_queue_waiting 0');

    // Collected on scrape: later requests show up without re-registering.
    await receiver.receive(delivery(createEvent('message.delivered')));
    expect(await registry.metrics()).toContain(`messaging_webhooks_requests_total{${processed}} 3\n`);
  });

  it('takes a prefix and labels, honours default labels and JSON export, and refuses a second registration', async () => {
    const receiver = await traffic();
    const registry = new Registry();
    registry.setDefaultLabels({ app: 'sms' });
    registerMetrics(receiver, { registry, prefix: 'hooks_', labels: { receiver: 'primary' } });
    const text = await registry.metrics();
    expect(text).toContain(
      'hooks_requests_total{receiver="primary",outcome="duplicate",status="200",event_type="message.delivered",app="sms"} 1',
    );
    const json = await registry.getMetricsAsJSON();
    expect(json.map((metric) => metric.name)).toEqual([
      'hooks_requests_total',
      'hooks_request_duration_seconds',
      'hooks_handlers_running',
      'hooks_queue_waiting',
    ]);
    expect(() =>
      registerMetrics(createReceiver({ secrets: SECRET }), { registry, prefix: 'hooks_' }),
    ).toThrow(/already been registered/);
  });

  it('refuses a prefix or labels Prometheus could not scrape, or that would replace its own labels', async () => {
    const receiver = createReceiver({ secrets: SECRET });
    const registry = new Registry();
    expect(() => registerMetrics(receiver, { registry, prefix: 'hooks-' })).toThrow(
      /prefix must be the start of a Prometheus metric name/,
    );
    expect(() => registerMetrics(receiver, { registry, labels: { outcome: 'x' } })).toThrow(
      /"outcome" cannot be a label name here.*none of outcome, status, event_type, le/,
    );
    expect(() => registerMetrics(receiver, { registry, labels: { __name__: 'x' } })).toThrow(
      WebhookConfigError,
    );
    expect(await registry.getMetricsAsJSON()).toEqual([]);
  });
});
