import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { MAX_OPERATORS } from '../../src/tracker/metrics.js';
import type { ServiceMessageStatus } from '../../src/tracker/service-client.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { SECRET } from '../support/unit.js';

const T0 = Date.parse('2026-11-28T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const event = (type: string, messageId: string, ms: number, operator?: string) => ({
  type,
  created_at: at(ms),
  data: { message_id: messageId, ...(operator && { operator }) },
});

/** The service as reconciliation sees it: what each message's status is there, or an error for `m-broken`. */
const service = (answers: Record<string, ServiceMessageStatus['status']>) => ({
  async messageStatus(messageId: string): Promise<ServiceMessageStatus | undefined> {
    if (messageId === 'm-broken') throw new Error('the service answered 500');
    const status = answers[messageId];
    if (status === undefined) return undefined;
    const history: ServiceMessageStatus['history'] = [{ status, at: at(1000) }];
    if (status === 'delivered' || status === 'failed') history.unshift({ status: 'submitted', at: at(1000) });
    if (status === 'delivered' || status === 'failed') history[1] = { status, at: at(30_000) };
    return { messageId, status, operator: 'op-b', to: '+15550100', history };
  },
});

describe('registerMetrics with a tracker', () => {
  it('exposes receipt latency, messages open, transitions by source and reconciled messages by outcome', async () => {
    let now = T0;
    const tracker = createMessageTracker({ now: () => now, finalAfterMs: 3600_000 });
    const registry = new Registry();
    registerMetrics(createReceiver({ secrets: SECRET, tracker }), { registry, tracker });

    for (const id of ['m-hooked', 'm-lost', 'm-pending', 'm-broken'])
      await tracker.expect(id, { sentAt: T0 });
    now = T0 + 60_000;
    await tracker.observeEvent(event('message.submitted', 'm-hooked', 1000, 'op-a'));
    await tracker.observeEvent(event('message.delivered', 'm-hooked', 12_000, 'op-a'));
    // A copy changes nothing, so counts nothing.
    await tracker.observeEvent(event('message.delivered', 'm-hooked', 12_000, 'op-a'));
    const client = service({ 'm-lost': 'failed', 'm-pending': 'queued' });
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({
      checked: 3,
      moved: 1,
      stillOpen: 1,
      failed: 1,
    });
    now = T0 + 3600_000;
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({ unknown: 1, failed: 1 });

    const text = await registry.metrics();
    const latency = 'messaging_webhooks_message_receipt_latency_seconds';
    // Latency runs from sentAt to the receipt's time: 12 s by webhook, 30 s as the service reported it.
    expect(text).toContain(`${latency}_bucket{operator="op-a",status="delivered",le="10"} 0\n`);
    expect(text).toContain(`${latency}_bucket{operator="op-a",status="delivered",le="30"} 1\n`);
    expect(text).toContain(`${latency}_sum{operator="op-a",status="delivered"} 12\n`);
    expect(text).toContain(`${latency}_count{operator="op-b",status="failed"} 1\n`);
    expect(text).toContain('messaging_webhooks_messages_open 1\n');
    const transitions = 'messaging_webhooks_message_transitions_total';
    expect(text).toContain(`${transitions}{source="expect"} 4\n`);
    expect(text).toContain(`${transitions}{source="webhook"} 2\n`);
    // m-lost: submitted then failed.
    expect(text).toContain(`${transitions}{source="reconcile"} 2\n`);
    expect(text).toContain(`${transitions}{source="timeout"} 1\n`);
    const reconciled = 'messaging_webhooks_reconciled_messages_total';
    expect(text).toContain(`${reconciled}{outcome="moved"} 1\n`);
    expect(text).toContain(`${reconciled}{outcome="still_open"} 1\n`);
    expect(text).toContain(`${reconciled}{outcome="unknown"} 1\n`);
    expect(text).toContain(`${reconciled}{outcome="failed"} 2\n`);
  });

  it(`labels the first ${MAX_OPERATORS} operators by name and every later one as other`, async () => {
    const tracker = createMessageTracker({ now: () => T0 + 60_000 });
    const registry = new Registry();
    registerMetrics(createReceiver({ secrets: SECRET }), { registry, tracker, labels: { receiver: 'sms' } });
    for (let i = 0; i < MAX_OPERATORS + 5; i++) {
      await tracker.expect(`m-${i}`, { sentAt: T0 });
      await tracker.observeEvent(event('message.delivered', `m-${i}`, 5000, `op-${i}`));
    }
    const text = await registry.metrics();
    const operators = new Set(
      [...text.matchAll(/_count\{receiver="sms",operator="([^"]*)"/g)].map(([, name]) => name),
    );
    expect(operators.size).toBe(MAX_OPERATORS + 1);
    expect(text).toContain(
      'messaging_webhooks_message_receipt_latency_seconds_count{receiver="sms",operator="other",status="delivered"} 5\n',
    );
    expect(text).toContain('messaging_webhooks_messages_open{receiver="sms"} 0\n');
  });

  it('refuses what is no tracker, and a label the tracker series set', () => {
    const receiver = createReceiver({ secrets: SECRET });
    const registry = new Registry();
    expect(() => registerMetrics(receiver, { registry, tracker: {} as never })).toThrow(
      /tracker must be a message tracker/,
    );
    const tracker = createMessageTracker();
    expect(() => registerMetrics(receiver, { registry, tracker, labels: { operator: 'x' } })).toThrow(
      /"operator" cannot be a label name here/,
    );
  });
});
