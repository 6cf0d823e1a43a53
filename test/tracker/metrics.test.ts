import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { type Emulator, type MessageRecord, startEmulator } from '../../src/emulator/index.js';
import { createReceiver } from '../../src/index.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { MAX_OPERATORS } from '../../src/tracker/metrics.js';
import { createServiceClient } from '../../src/tracker/service-client.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { call, changesOf } from '../emulator/helpers.js';
import { startServer, type TestServer } from '../support/child-processes.js';
import { SECRET } from '../support/unit.js';
import { until } from '../support/until.js';

const T0 = Date.parse('2026-11-28T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const event = (type: string, messageId: string, ms: number, operator?: string) => ({
  type,
  created_at: at(ms),
  data: { message_id: messageId, ...(operator && { operator }) },
});

const SEND_KEY = 'sk_test_metrics_tracker2_send';
const STATUS_KEY = 'sk_test_metrics_tracker2_status';
// Every message is answered 3 s after it was sent: the margin in which the last one is still open.
const RESULT_MS = 3000;

async function send(emulator: Emulator): Promise<string> {
  const { status, body } = await call(emulator, '/v1/messages', {
    key: SEND_KEY,
    body: { to: '+15550100001', sender: 'Acme', body: 'Hello' },
  });
  expect(status).toBe(202);
  return body.id;
}

describe('registerMetrics with a tracker', () => {
  let emulator: Emulator | undefined;
  let server: TestServer | undefined;
  afterEach(async () => {
    await emulator?.close();
    await server?.close();
    emulator = undefined;
    server = undefined;
  });

  it('exposes receipt latency, messages open, transitions by source and reconciled messages by outcome', async () => {
    let skewMs = 0;
    const tracker = createMessageTracker({ now: () => Date.now() + skewMs, finalAfterMs: 3600_000 });
    const registry = new Registry();
    const receiver = createReceiver({ secrets: SECRET, tracker });
    receiver.on('message.delivered', () => {});
    receiver.on('message.failed', () => {});
    registerMetrics(receiver, { registry, tracker });
    server = await startServer(createNodeHandler(receiver));
    // Seed 10 draws: the first message delivered with its receipt sent, the second failed with its receipt
    // lost (checked below, not assumed).
    emulator = await startEmulator({
      test: { endpoint: server.url, secret: SECRET, keys: [SEND_KEY, STATUS_KEY] },
      schedule: { submitMs: 0, resultMs: RESULT_MS, jitterMs: 0, failureRate: 0.5 },
      chaos: { webhookLoss: 0.5 },
      seed: 10,
    });
    const { state } = emulator;
    const record = (id: string) => state.messages.get(id) as MessageRecord;

    const hooked = await send(emulator);
    await tracker.expect(hooked, { sentAt: Date.now() });
    const lost = await send(emulator);
    await tracker.expect(lost, { sentAt: Date.now() });
    const answered = () =>
      record(lost).status === 'failed' && state.deliveriesOf(hooked)[0]?.state === 'acknowledged';
    await until(answered, { changes: changesOf(emulator), timeoutMs: 3 * RESULT_MS });
    expect([record(hooked).webhook_lost, record(hooked).status, record(lost).webhook_lost]).toEqual([
      undefined,
      'delivered',
      true,
    ]);
    const pending = await send(emulator);
    await tracker.expect(pending, { sentAt: Date.now() });

    const revoked = createServiceClient({ baseUrl: emulator.url, apiKey: 'sk_test_revoked' });
    expect(await tracker.reconcile({ client: revoked, olderThanMs: 0 })).toEqual({
      checked: 2,
      moved: 0,
      stillOpen: 0,
      unknown: 0,
      failed: 2,
    });
    const client = createServiceClient({ baseUrl: emulator.url, apiKey: STATUS_KEY });
    // lost: submitted, then failed; pending: submitted, still open.
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({ checked: 2, moved: 2 });
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({ checked: 1, stillOpen: 1 });
    expect(await registry.metrics()).toContain('messaging_webhooks_messages_open 1\n');
    skewMs = 3600_000;
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({ checked: 1, unknown: 1 });
    // The margin held: the service had not answered the pending message while it was reconciled.
    expect(record(pending).status).toBe('submitted');
    expect(client.stats).toMatchObject({ requests: 4, rateLimited: 0 });

    const text = await registry.metrics();
    const latency = 'messaging_webhooks_message_receipt_latency_seconds';
    // Latency runs from sentAt to the receipt's time: by webhook, and as the service's history reported it.
    for (const id of [hooked, lost]) {
      const labels = `operator="${record(id).operator}",status="${record(id).status}"`;
      expect(text).toContain(`${latency}_bucket{${labels},le="2.5"} 0\n`);
      expect(text).toContain(`${latency}_bucket{${labels},le="10"} 1\n`);
      expect(text).toContain(`${latency}_count{${labels}} 1\n`);
    }
    expect(text).toContain('messaging_webhooks_messages_open 0\n');
    const transitions = 'messaging_webhooks_message_transitions_total';
    expect(text).toContain(`${transitions}{source="expect"} 3\n`);
    expect(text).toContain(`${transitions}{source="webhook"} 1\n`);
    expect(text).toContain(`${transitions}{source="reconcile"} 3\n`);
    expect(text).toContain(`${transitions}{source="timeout"} 1\n`);
    const reconciled = 'messaging_webhooks_reconciled_messages_total';
    expect(text).toContain(`${reconciled}{outcome="moved"} 2\n`);
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
