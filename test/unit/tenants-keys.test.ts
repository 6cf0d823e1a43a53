import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import type { TenantSecretsAnswer } from '../../src/index.js';
import { createReceiver, type ErrorContext, MemoryDedupeStore } from '../../src/index.js';
import { registerMetrics } from '../../src/observability/prometheus.js';
import { createTestLogger } from '../setup/test-logger.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected } from '../support/unit.js';

const SECRET = 'whsec_tenant_keys_3f9a1c7e5b2d';

/** One captured delivery, posted to /webhooks/<account>. */
function to(account: string, body: string, signature: string): ReceiveRequest {
  const request = delivery(body, { header: signature });
  return { ...request, url: `/webhooks/${account}`, params: { account } };
}

function capture(event: unknown) {
  const body = JSON.stringify(event);
  const { headers } = delivery(body, { secret: SECRET }) as { headers: Record<string, string> };
  return { body, signature: headers['webhook-signature'] as string };
}

function tenantReceiver(lookup: (tenant: string) => TenantSecretsAnswer | Promise<TenantSecretsAnswer>) {
  const { logger, lines } = createTestLogger();
  const errors: [string, ErrorContext][] = [];
  const receiver = createReceiver({
    tenant: (request) => request.params.account,
    secrets: lookup,
    store: new MemoryDedupeStore(),
    logger,
  });
  receiver.onError((error, ctx) => {
    errors.push([error.code, ctx]);
  });
  return { receiver, lines, errors };
}

describe('tenant keys: one event is one run, whatever the tenant holds or how it is spelled', () => {
  it('runs one delivery to /acme, /Acme, /ACME and /aCME once, under the tenant the lookup answered for', async () => {
    // A case-insensitive lookup (a citext column, lower(), a MySQL collation) that names the account it found.
    const { receiver, lines } = tenantReceiver(async (tenant) =>
      tenant.toLowerCase() === 'acme' ? { tenant: 'acme', secrets: SECRET } : undefined,
    );
    const registry = new Registry();
    registerMetrics(receiver, { registry, tenants: true });
    const ran: [string | undefined, string][] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      ran.push([ctx.tenant, ctx.dedupeKey]);
    });
    const event = deliveredEvent();
    const { body, signature } = capture(event);
    const first = await receiver.receive(to('acme', body, signature));
    expectAccepted(first);
    for (const spelling of ['Acme', 'ACME', 'aCME']) {
      const again = await receiver.receive(to(spelling, body, signature));
      expectAccepted(again, 200, true);
      expect(again.tenant).toBe('acme');
    }
    expect(ran).toEqual([['acme', `tenant:acme:live:${event.id}`]]);
    expect(lines.map((line) => line.fields.tenant)).toEqual(['acme', 'acme', 'acme', 'acme']);
    const series = (await registry.getSingleMetric('messaging_webhooks_requests_total')?.get())?.values;
    expect(series?.map((value) => [value.labels.outcome, value.labels.tenant, value.value]).sort()).toEqual([
      ['duplicate', 'acme', 3],
      ['processed', 'acme', 1],
    ]);
  });

  it('keeps the plain secrets answer keyed as the request spells the tenant', async () => {
    const { receiver } = tenantReceiver((tenant) => (tenant === 'acme' ? SECRET : undefined));
    const keys: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      keys.push(ctx.dedupeKey);
    });
    const event = deliveredEvent();
    const { body, signature } = capture(event);
    expectAccepted(await receiver.receive(to('acme', body, signature)));
    expect(keys).toEqual([`tenant:acme:live:${event.id}`]);
  });

  it('answers 503 tenant_lookup_failed for a lookup that names no usable tenant, and 401 for no secrets', async () => {
    const { receiver, errors } = tenantReceiver((tenant) =>
      tenant === 'blank' ? { tenant: '', secrets: SECRET } : { tenant: 'gone', secrets: undefined },
    );
    const { body, signature } = capture(deliveredEvent());
    const blank = await receiver.receive(to('blank', body, signature));
    expectRejected(blank, 503, 'tenant_lookup_failed');
    expect(errors[0]?.[0]).toBe('tenant_lookup_failed');
    expectRejected(await receiver.receive(to('other', body, signature)), 401, 'unknown_tenant');
  });

  it('forgetSecrets(tenant) forgets every spelling the lookup answered for under it', async () => {
    const asked: string[] = [];
    const { receiver } = tenantReceiver((tenant) => {
      asked.push(tenant);
      return { tenant: tenant.toLowerCase(), secrets: SECRET };
    });
    const { body, signature } = capture(deliveredEvent());
    await receiver.receive(to('ACME', body, signature));
    await receiver.receive(to('ACME', body, signature));
    receiver.forgetSecrets('acme');
    await receiver.receive(to('ACME', body, signature));
    expect(asked).toEqual(['ACME', 'ACME']);
  });

  it('processes a tenant with a lone surrogate, apart from the one with U+FFFD, never a 500', async () => {
    const { receiver, errors } = tenantReceiver(() => SECRET);
    const keys: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      keys.push(ctx.dedupeKey);
    });
    const event = deliveredEvent();
    const { body, signature } = capture(event);
    for (const tenant of ['a\ud800', 'a\udc00', 'a\ufffd', 'a%ud800']) {
      expectAccepted(await receiver.receive(to(tenant, body, signature)));
    }
    expectAccepted(await receiver.receive(to('a\ud800', body, signature)), 200, true);
    expect(keys).toEqual([
      `tenant:a%uD800:live:${event.id}`,
      `tenant:a%uDC00:live:${event.id}`,
      `tenant:a%EF%BF%BD:live:${event.id}`,
      `tenant:a%25ud800:live:${event.id}`,
    ]);
    expect(errors).toEqual([]);
  });

  it('keys a long tenant by the SHA-256 of its encoding, so the key fits every store', async () => {
    const { receiver } = tenantReceiver(() => SECRET);
    const keys: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      keys.push(ctx.dedupeKey);
    });
    const event = deliveredEvent();
    const { body, signature } = capture(event);
    const long = 'ж'.repeat(230);
    const ascii = 'a'.repeat(256);
    for (const tenant of [long, `${long.slice(1)}з`, ascii]) {
      expectAccepted(await receiver.receive(to(tenant, body, signature)));
    }
    expect(keys[0]).toMatch(new RegExp(`^tenant:#[0-9a-f]{64}:live:${event.id}$`));
    expect(keys[1]).toMatch(/^tenant:#[0-9a-f]{64}:/);
    expect(keys[1]).not.toBe(keys[0]);
    // A tenant of 256 ASCII letters (the longest one accepted) is keyed as it is.
    expect(keys[2]).toBe(`tenant:${ascii}:live:${event.id}`);
  });
});
