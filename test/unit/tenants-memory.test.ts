import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type Signature, signatureOf } from '../../src/pipeline/1-read-verify.js';
import { createTenantSecrets, resolveTenantSecrets } from '../../src/receiver/tenant-secrets.js';
import { defaultProfile } from '../../src/signature/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The heap in use once garbage is collected, in bytes. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function cache(maxTenants: number) {
  let lookups = 0;
  const tenants = createTenantSecrets({
    tenantOf: () => undefined,
    lookup: (tenant) => {
      lookups++;
      return tenant.startsWith('stranger-') ? undefined : [`whsec_memory_${tenant}_0a1b2c3d4e5f`];
    },
    options: resolveTenantSecrets({ maxTenants }),
    verifying: { profile: defaultProfile, crypto: undefined, toleranceSeconds: undefined },
    report: async () => {},
    now: Date.now,
    signatureOf,
  });
  return { tenants, lookups: () => lookups };
}

async function lookUp(tenants: ReturnType<typeof cache>['tenants'], from: number, to: number) {
  for (let i = from; i < to; i++) {
    const found = await tenants.signatureOf(`tenant-${i}`, 'req_memory');
    expect('check' in (found as Signature)).toBe(true);
  }
}

describe('the tenant cache is bounded', () => {
  it('keeps at most maxTenants of 10,000 tenants, and its heap stops growing at that bound', async () => {
    const { tenants, lookups } = cache(1000);
    const before = heapUsed();
    await lookUp(tenants, 0, 1000);
    const atBound = heapUsed() - before;
    expect(tenants.size).toBe(1000);
    await lookUp(tenants, 1000, 10_000);
    const afterAll = heapUsed() - before;
    expect(tenants.size).toBe(1000);
    expect(lookups()).toBe(10_000);
    // Nine times as many tenants went through; the heap holds what 1,000 need, give or take a quarter.
    expect(afterAll).toBeLessThan(atBound * 1.25 + 512 * 1024);
    // The least recently used went first: the first tenants are looked up again, the last ones are not.
    await lookUp(tenants, 9990, 10_000);
    expect(lookups()).toBe(10_000);
    await lookUp(tenants, 0, 1);
    expect(lookups()).toBe(10_001);
  });

  it('holds 10,000 tenants at the default bound, and no more', async () => {
    const { tenants } = cache(resolveTenantSecrets(undefined).maxTenants);
    await lookUp(tenants, 0, 10_000);
    expect(tenants.size).toBe(10_000);
    await lookUp(tenants, 10_000, 12_000);
    expect(tenants.size).toBe(10_000);
  });

  it('keeps its known tenants through a flood of unknown ones', async () => {
    const { tenants, lookups } = cache(10);
    await lookUp(tenants, 0, 10);
    for (let i = 0; i < 1000; i++) {
      const found = await tenants.signatureOf(`stranger-${i}`, 'req_memory');
      expect((found as { stop?: string }).stop).toBe('unknown_tenant');
    }
    expect(tenants.size).toBe(20);
    const before = lookups();
    await lookUp(tenants, 0, 10);
    expect(lookups()).toBe(before);
  });
});
