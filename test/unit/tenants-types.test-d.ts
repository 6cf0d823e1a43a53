import { describe, expectTypeOf, it } from 'vitest';
import type {
  ModeHandling,
  SecretsLookup,
  TenantRequest,
  TenantSecretsAnswer,
  TenantSecretsOptions,
} from '../../src/index.js';
import { createReceiver, type ErrorContext, type Secrets } from '../../src/index.js';

declare const db: { webhookSecretsOf(tenant: string): Promise<Secrets | undefined> };

describe('tenants are typed', () => {
  it('takes secrets as a lookup and tenant as a function of the request; ctx.tenant is a string or undefined', () => {
    const receiver = createReceiver({
      tenant: (request) => {
        expectTypeOf(request).toEqualTypeOf<TenantRequest>();
        expectTypeOf(request.params.account).toEqualTypeOf<string | undefined>();
        expectTypeOf(request.header('x-account')).toEqualTypeOf<string | undefined>();
        expectTypeOf(request.url).toEqualTypeOf<string | undefined>();
        expectTypeOf(request.body).toEqualTypeOf<string | Uint8Array>();
        return request.params.account;
      },
      secrets: async (tenant) => db.webhookSecretsOf(tenant),
      tenantSecrets: { ttlMs: 60_000, negativeTtlMs: 10_000, maxTenants: 5000, timeoutMs: 1000 },
      modes: { test: 'ignore' },
    });
    receiver.on('message.delivered', (_event, ctx) => {
      expectTypeOf(ctx.tenant).toEqualTypeOf<string | undefined>();
    });
    receiver.onError((_error, ctx) => {
      expectTypeOf(ctx).toEqualTypeOf<ErrorContext>();
      expectTypeOf(ctx.tenant).toEqualTypeOf<string | undefined>();
    });
    receiver.onRejected((rejection) => {
      expectTypeOf(rejection.tenant).toEqualTypeOf<string | undefined>();
    });
    expectTypeOf(receiver.forgetSecrets).toEqualTypeOf<(tenant: string) => void>();
  });

  it('accepts a synchronous lookup, a list or a mode map, and refuses what is no Secrets', () => {
    const table: Record<string, Secrets> = {
      acme: ['whsec_a', 'whsec_b'],
      globex: { live: 'whsec_l', test: 'whsec_t' },
    };
    createReceiver({ tenant: (request) => request.header('x-account'), secrets: (tenant) => table[tenant] });
    // @ts-expect-error a lookup answers Secrets or undefined, not a number
    createReceiver({ tenant: () => 'a', secrets: (_tenant: string) => 42 });
    // @ts-expect-error the tenant is read synchronously
    createReceiver({ tenant: async () => 'a', secrets: (tenant: string) => table[tenant] });
    // @ts-expect-error a mode is handled or ignored
    createReceiver({ secrets: 'whsec_x', modes: { test: 'drop' } });
    expectTypeOf<SecretsLookup>().toEqualTypeOf<
      (tenant: string) => TenantSecretsAnswer | PromiseLike<TenantSecretsAnswer>
    >();
    // The tenant as the lookup knows it, with its secrets: every spelling it accepts is one tenant.
    createReceiver({
      tenant: (request) => request.params.account,
      secrets: async (tenant) => ({ tenant: tenant.toLowerCase(), secrets: table[tenant.toLowerCase()] }),
    });
    // @ts-expect-error the tenant it answers for is a string
    createReceiver({ tenant: () => 'a', secrets: (_tenant: string) => ({ tenant: 1, secrets: 'whsec_x' }) });
    expectTypeOf<TenantSecretsOptions['ttlMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ModeHandling>().toMatchTypeOf<{ test?: 'handle' | 'ignore' }>();
  });
});
