import { describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import {
  createReceiver,
  type ErrorContext,
  MemoryDedupeStore,
  type ReceiverOptions,
  type Secrets,
} from '../../src/index.js';
import { createTestLogger } from '../setup/test-logger.js';
import { gate } from '../support/gate.js';
import {
  type DeliveryOptions,
  deliveredEvent,
  delivery,
  expectAccepted,
  expectRejected,
} from '../support/unit.js';

const SECRETS: Record<string, string> = {
  acme: 'whsec_tenant_acme_7c1e9a3b5d2f',
  globex: 'whsec_tenant_globex_2b8d4f6a0c9e',
  'a:b': 'whsec_tenant_colon_5e3a1c7b9d0f',
};

/** A delivery posted to /webhooks/<account>, as a framework's route hands it over. */
function to(account: string | undefined, event: unknown, options: DeliveryOptions = {}): ReceiveRequest {
  const secret = options.secret ?? (account === undefined ? 'whsec_none' : (SECRETS[account] ?? 'whsec_x'));
  const request = delivery(event, { ...options, secret });
  return {
    ...request,
    url: `/webhooks/${account ?? ''}`,
    params: account === undefined ? {} : { account },
  };
}

function tenantReceiver(
  lookup: (tenant: string) => Secrets | undefined | PromiseLike<Secrets | undefined>,
  options: Partial<ReceiverOptions> = {},
) {
  const calls: string[] = [];
  const errors: [string, string, ErrorContext][] = [];
  const receiver = createReceiver({
    tenant: (request) => request.params.account,
    secrets: (tenant) => {
      calls.push(tenant);
      return lookup(tenant);
    },
    store: new MemoryDedupeStore(),
    ...options,
  });
  receiver.onError((error, ctx) => {
    errors.push([error.code, error.message, ctx]);
  });
  return { receiver, calls, errors };
}

const fromTable = (tenant: string) => SECRETS[tenant];

describe('tenants: a secret per tenant looked up per request', () => {
  it("verifies each tenant's deliveries with its own secret, and hands the tenant to handlers", async () => {
    const { receiver, calls } = tenantReceiver(fromTable);
    const seen: [string | undefined, string][] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      seen.push([ctx.tenant, ctx.dedupeKey]);
    });
    const event = deliveredEvent();
    const acme = await receiver.receive(to('acme', event));
    expectAccepted(acme);
    expect(acme.tenant).toBe('acme');
    expectAccepted(await receiver.receive(to('globex', deliveredEvent())));
    // Signed with globex's secret but posted to acme's URL: acme's secret does not verify it.
    const crossed = await receiver.receive(to('acme', deliveredEvent(), { secret: SECRETS.globex }));
    expectRejected(crossed, 401, 'signature_mismatch');
    expect(crossed.tenant).toBe('acme');
    expect(seen[0]).toEqual(['acme', `tenant:acme:live:${event.id}`]);
    expect(seen.map(([tenant]) => tenant)).toEqual(['acme', 'globex']);
    expect(calls).toEqual(['acme', 'globex']);
  });

  it("keeps two tenants' events with the same id apart, a tenant with ':' included", async () => {
    const { receiver } = tenantReceiver(fromTable);
    const ran: string[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      ran.push(ctx.dedupeKey);
    });
    const event = deliveredEvent();
    expectAccepted(await receiver.receive(to('acme', event)));
    expectAccepted(await receiver.receive(to('globex', event)));
    expectAccepted(await receiver.receive(to('a:b', event)));
    expectAccepted(await receiver.receive(to('acme', event)), 200, true);
    expect(ran).toEqual([
      `tenant:acme:live:${event.id}`,
      `tenant:globex:live:${event.id}`,
      `tenant:a%3Ab:live:${event.id}`,
    ]);
  });

  it('answers 401 unknown_tenant when the request names no tenant, without a lookup', async () => {
    const { receiver, calls } = tenantReceiver(fromTable);
    const outcome = await receiver.receive(to(undefined, deliveredEvent()));
    const error = expectRejected(outcome, 401, 'unknown_tenant');
    expect(error.message).toContain('names no tenant');
    expect(calls).toEqual([]);
  });

  it('answers 401 unknown_tenant naming the tenant looked up, and caches that for negativeTtlMs', async () => {
    let clock = Date.now();
    const { receiver, calls } = tenantReceiver(fromTable, {
      now: () => clock,
      tenantSecrets: { negativeTtlMs: 1000 },
    });
    const outcome = await receiver.receive(to('init\u001bech', deliveredEvent(), { secret: SECRETS.acme }));
    const error = expectRejected(outcome, 401, 'unknown_tenant');
    expect(error.message).toContain('"init\\u001bech"');
    expect(error.message).not.toContain(SECRETS.acme);
    expect(outcome.tenant).toBe('init\u001bech');
    await receiver.receive(to('init\u001bech', deliveredEvent()));
    expect(calls).toHaveLength(1);
    clock += 1001;
    await receiver.receive(to('init\u001bech', deliveredEvent()));
    expect(calls).toHaveLength(2);
  });

  it('picks up a rotated secret once ttlMs passed, and at once after forgetSecrets', async () => {
    let clock = Date.now();
    const current: Record<string, string[]> = { acme: ['whsec_acme_old_1a2b3c4d5e6f'] };
    const { receiver, calls } = tenantReceiver((tenant) => current[tenant], {
      now: () => clock,
      tenantSecrets: { ttlMs: 60_000 },
    });
    const signed = (secret: string) =>
      to('acme', deliveredEvent(), { secret, timestamp: Math.floor(clock / 1000) });
    expectAccepted(await receiver.receive(signed('whsec_acme_old_1a2b3c4d5e6f')));
    current.acme = ['whsec_acme_new_6f5e4d3c2b1a'];
    // Within the TTL the cached secret still answers.
    expectRejected(await receiver.receive(signed('whsec_acme_new_6f5e4d3c2b1a')), 401, 'signature_mismatch');
    clock += 60_001;
    expectAccepted(await receiver.receive(signed('whsec_acme_new_6f5e4d3c2b1a')));
    expect(calls).toEqual(['acme', 'acme']);
    current.acme = ['whsec_acme_newer_0a9b8c7d6e5f'];
    receiver.forgetSecrets('acme');
    expectAccepted(await receiver.receive(signed('whsec_acme_newer_0a9b8c7d6e5f')));
    expect(calls).toEqual(['acme', 'acme', 'acme']);
  });

  it('makes one lookup for 1,000 concurrent deliveries of one cold tenant', async () => {
    const held = gate();
    const { receiver, calls } = tenantReceiver(async (tenant) => {
      await held.opened;
      return SECRETS[tenant];
    });
    let handled = 0;
    receiver.on('message.delivered', () => {
      handled++;
    });
    const outcomes = Array.from({ length: 1000 }, () => receiver.receive(to('acme', deliveredEvent())));
    held.open();
    for (const outcome of await Promise.all(outcomes)) expectAccepted(outcome);
    expect(calls).toEqual(['acme']);
    expect(handled).toBe(1000);
  });

  it('takes any thenable from the lookup', async () => {
    // A Promises/A+ object that is no native promise, as a driver or an instrumentation wrapper returns.
    const thenable = (value: string | undefined): PromiseLike<string | undefined> => {
      const answer = {
        ['then' as string](resolve: (v: string | undefined) => void) {
          setImmediate(() => resolve(value));
          return answer;
        },
      };
      return answer as unknown as PromiseLike<string | undefined>;
    };
    const { receiver } = tenantReceiver((tenant) => thenable(SECRETS[tenant]));
    expectAccepted(await receiver.receive(to('globex', deliveredEvent())));
    expectRejected(await receiver.receive(to('nobody', deliveredEvent())), 401, 'unknown_tenant');
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('db down');
      },
    ],
    ['rejects', () => Promise.reject(new Error('db down'))],
  ] as const)(
    'answers 503 tenant_lookup_failed when the lookup %s, tells onError, and asks again next time',
    async (_, lookup) => {
      const { receiver, calls, errors } = tenantReceiver(lookup);
      const outcome = await receiver.receive(to('acme', deliveredEvent()));
      expectRejected(outcome, 503, 'tenant_lookup_failed', '5');
      expect(outcome.tenant).toBe('acme');
      expect(errors).toHaveLength(1);
      const [code, message, ctx] = errors[0] as [string, string, ErrorContext];
      expect(code).toBe('tenant_lookup_failed');
      expect(message).toContain('tenant "acme"');
      expect(message).toContain('db down');
      expect(ctx.tenant).toBe('acme');
      await receiver.receive(to('acme', deliveredEvent()));
      expect(calls).toEqual(['acme', 'acme']);
    },
  );

  it('answers 503 once a hanging lookup passes timeoutMs, and close({ timeoutMs }) is not held by it', async () => {
    const { receiver, errors } = tenantReceiver(() => new Promise<undefined>(() => {}), {
      tenantSecrets: { timeoutMs: 50 },
    });
    const outcome = await receiver.receive(to('acme', deliveredEvent()));
    expectRejected(outcome, 503, 'tenant_lookup_failed', '5');
    expect(errors[0]?.[1]).toContain('did not answer within 50 ms');
    const late = receiver.receive(to('acme', deliveredEvent()));
    await receiver.close({ timeoutMs: 100 });
    expectRejected(await late, 503, 'tenant_lookup_failed');
  });

  it('answers 503 for an unusable secret from the lookup, naming the tenant and the fault, never the secret', async () => {
    const bad = 'whsec_padded_secret_9f8e7d6c5b4a\n';
    const { receiver, errors } = tenantReceiver(() => [bad]);
    const outcome = await receiver.receive(to('acme', deliveredEvent()));
    const answered = expectRejected(outcome, 503, 'tenant_lookup_failed');
    expect(answered.message).toContain('tenant "acme"');
    const [, message] = errors[0] as [string, string, ErrorContext];
    expect(message).toContain('tenant "acme"');
    expect(message).toContain('whitespace');
    expect(message).not.toContain('whsec_padded');
    expect(answered.message).not.toContain('whsec_padded');
  });

  it('answers 503 tenant_lookup_failed when the tenant option throws, and tells onError', async () => {
    const errors: string[] = [];
    const receiver = createReceiver({
      tenant: () => {
        throw new Error('no params here');
      },
      secrets: fromTable,
    });
    receiver.onError((error) => {
      errors.push(error.message);
    });
    expectRejected(await receiver.receive(to('acme', deliveredEvent())), 503, 'tenant_lookup_failed', '5');
    expect(errors[0]).toContain('no params here');
  });

  it('reads the tenant from a header, the URL or the body as well', async () => {
    const seen: unknown[] = [];
    const receiver = createReceiver({
      tenant: (request) => {
        const body = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
        seen.push([request.params, request.header('X-Account'), request.url, JSON.parse(body).account]);
        return request.header('x-account');
      },
      secrets: fromTable,
    });
    const request = delivery(
      { ...deliveredEvent(), account: 'acme' },
      {
        secret: SECRETS.acme,
        headers: { 'x-account': 'acme' },
      },
    );
    expectAccepted(await receiver.receive({ ...request, url: '/hooks?account=acme' }));
    expect(seen).toEqual([[{}, 'acme', '/hooks?account=acme', 'acme']]);
  });

  it('carries the tenant in the log line, onRejected and the error context', async () => {
    const { logger, lines } = createTestLogger();
    const { receiver } = tenantReceiver(fromTable, { logger });
    const rejected: (string | undefined)[] = [];
    receiver.onRejected((rejection) => {
      rejected.push(rejection.tenant);
    });
    await receiver.receive(to('acme', deliveredEvent()));
    await receiver.receive(to('globex', deliveredEvent(), { secret: SECRETS.acme }));
    expect(lines.map((line) => [line.fields.outcome, line.fields.tenant])).toEqual([
      ['processed', 'acme'],
      ['signature_mismatch', 'globex'],
    ]);
    expect(rejected).toEqual(['globex']);
  });

  it('refuses tenant without a secrets function and a secrets function without tenant', () => {
    expect(() => createReceiver({ tenant: () => 'a', secrets: 'whsec_static_1a2b3c' })).toThrow(
      /tenant needs secrets as a function/,
    );
    expect(() => createReceiver({ secrets: fromTable })).toThrow(/also pass tenant/);
    expect(() =>
      createReceiver({ tenant: () => 'a', secrets: fromTable, tenantSecrets: { ttlMs: 0 } }),
    ).toThrow(/tenantSecrets.ttlMs/);
  });
});
