import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import { createReceiver } from '../../src/index.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { deliveredEvent, delivery } from '../support/unit.js';

const secretOf = (tenant: string) => `whsec_metrics_${tenant}_4d2c8a6e0b1f`;
const KNOWN = new Set(['acme', 'globex', 'initech']);

function tenantReceiver() {
  const receiver = createReceiver({
    tenant: (request) => request.params.account,
    secrets: (tenant) => (KNOWN.has(tenant) ? secretOf(tenant) : undefined),
  });
  receiver.on('message.delivered', () => {});
  return receiver;
}

const to = (account: string, secret = secretOf(account)): ReceiveRequest => ({
  ...delivery(deliveredEvent(), { secret }),
  params: { account },
});

async function traffic(receiver: ReturnType<typeof tenantReceiver>) {
  for (const account of ['acme', 'acme', 'globex', 'initech']) await receiver.receive(to(account));
  // Unknown tenants and forged requests: none of them may become a label value.
  for (let i = 0; i < 50; i++) await receiver.receive(to(`stranger-${i}`));
  await receiver.receive(to('acme', 'whsec_forged_7e5c3a1b9d0f'));
}

const requests = async (registry: Registry) =>
  (await registry.getSingleMetric('messaging_webhooks_requests_total')?.get())?.values.map((value) => [
    value.labels.outcome,
    value.labels.tenant,
    value.value,
  ]);

describe('Prometheus tenant label', () => {
  it('adds no tenant label unless asked, and adds the tenants up', async () => {
    const receiver = tenantReceiver();
    await traffic(receiver);
    const registry = new Registry();
    registerMetrics(receiver, { registry });
    expect(await requests(registry)).toEqual([
      ['processed', undefined, 4],
      ['unknown_tenant', undefined, 50],
      ['signature_mismatch', undefined, 1],
    ]);
  });

  it('labels verified tenants when asked, and never an unknown or unverified one', async () => {
    const receiver = tenantReceiver();
    await traffic(receiver);
    const registry = new Registry();
    registerMetrics(receiver, { registry, tenants: true });
    expect(await requests(registry)).toEqual([
      ['processed', 'acme', 2],
      ['processed', 'globex', 1],
      ['processed', 'initech', 1],
      ['unknown_tenant', '', 50],
      ['signature_mismatch', '', 1],
    ]);
    const text = await registry.metrics();
    expect(text).not.toContain('stranger');
  });

  it('labels only the listed tenants, the others as other', async () => {
    const receiver = tenantReceiver();
    await traffic(receiver);
    const registry = new Registry();
    registerMetrics(receiver, { registry, tenants: ['acme'] });
    expect(await requests(registry)).toEqual([
      ['processed', 'acme', 2],
      ['processed', 'other', 2],
      ['unknown_tenant', '', 50],
      ['signature_mismatch', '', 1],
    ]);
    const histogram = await registry.getSingleMetric('messaging_webhooks_request_duration_seconds')?.get();
    const other = (
      (histogram?.values ?? []) as { metricName?: string; labels: { tenant?: string }; value: number }[]
    ).find((value) => value.metricName?.endsWith('_count') && value.labels.tenant === 'other');
    expect(other?.value).toBe(2);
  });

  it('counts past 100 verified tenants as other', async () => {
    const many = new Set(Array.from({ length: 120 }, (_, i) => `t${i}`));
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: (tenant) => (many.has(tenant) ? secretOf(tenant) : undefined),
    });
    for (const tenant of many) await receiver.receive(to(tenant));
    const tenants = new Set(receiver.metrics().series.map((series) => series.tenant));
    expect(tenants.size).toBe(101);
    expect(tenants.has('other')).toBe(true);
    expect(() => registerMetrics(receiver, { registry: new Registry(), tenants: 'all' as never })).toThrow(
      /tenants must be true/,
    );
  });

  it('labels a listed tenant however many other tenants came first, and stays bounded', async () => {
    const others = Array.from({ length: 150 }, (_, i) => `t${i}`);
    const known = new Set(['acme', ...others]);
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: (tenant) => (known.has(tenant) ? secretOf(tenant) : undefined),
    });
    const registry = new Registry();
    registerMetrics(receiver, { registry, tenants: ['acme'] });
    for (const tenant of others) await receiver.receive(to(tenant));
    await receiver.receive(to('acme'));
    await receiver.receive(to('acme'));
    expect(await requests(registry)).toEqual([
      ['processed', 'other', 150],
      ['processed', 'acme', 2],
    ]);
    // The receiver still keeps at most 100 unlisted tenants apart, and the listed ones besides.
    const tenants = new Set(receiver.metrics().series.map((series) => series.tenant));
    expect(tenants.size).toBe(102);
    expect(Object.getOwnPropertySymbols({ ...receiver })).toEqual([]);
  });
});
