import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ClaimResult, DedupeStore } from '../../src/stores/types.js';
import { describeStoreContract } from './store-contract-conformance.js';

export interface ConformanceTarget {
  store: DedupeStore<unknown>;
  /** A lease short enough to wait out (real stores: real time). */
  leaseMs: number;
  /**
   * Lets `ms` pass: a sleep for real stores, a clock step for the memory store. A lease or a retention ending
   * on the store's own clock is the thing under test, and no test can move that clock.
   */
  advance(ms: number): Promise<void>;
  /** How far past an expiry to advance before it must have taken effect (covers clock granularity). */
  slackMs: number;
}

const RETENTION_MS = 300;
const LONG_RETENTION_MS = 60_000;

function claimed(result: ClaimResult): string {
  expect(result.status).toBe('claimed');
  return (result as { token: string }).token;
}

/**
 * The contract every DedupeStore honours; the Redis and PostgreSQL suites run it against real servers. Then
 * the receiver over the store answering in every shape user code may (describeStoreContract).
 */
export function describeStoreConformance(name: string, setup: () => ConformanceTarget): void {
  describeStoreContract(name, setup);
  describe(`${name} store conformance`, () => {
    const run = randomUUID().slice(0, 8);
    let n = 0;
    const freshKey = () => `live:evt_conformance_${run}_${++n}`;

    it('claims a new key once; a second claim is in flight with the lease left as retryAfterMs', async () => {
      const { store, leaseMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      expect(token).toEqual(expect.any(String));
      const again = await store.claim(key, leaseMs);
      expect(again.status).toBe('in_flight');
      const { retryAfterMs } = again as { retryAfterMs: number };
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(leaseMs);
    });

    it('holds a key with a NUL or a lone surrogate like any other, apart from the key without it', async () => {
      const { store, leaseMs } = setup();
      for (const key of [`${freshKey()}\u0000x`, `${freshKey()}\ud800`, `${freshKey()}\udc00\u0000`]) {
        const token = claimed(await store.claim(key, leaseMs));
        expect((await store.claim(key, leaseMs)).status).toBe('in_flight');
        expect(await store.renew(key, token, leaseMs)).toBe(true);
        expect(await store.release(key, token)).toBe(true);
        const again = claimed(await store.claim(key, leaseMs));
        expect(await store.complete(key, again, LONG_RETENTION_MS)).toBe(true);
        expect(await store.claim(key, leaseMs)).toEqual({ status: 'duplicate' });
      }
      const plain = freshKey();
      const token = claimed(await store.claim(`${plain}\u0000`, leaseMs));
      expect(await store.complete(`${plain}\u0000`, token, LONG_RETENTION_MS)).toBe(true);
      expect((await store.claim(plain, leaseMs)).status).toBe('claimed');
    });

    it('keeps keys apart that differ only in a lone surrogate (UTF-8 would spell each one U+FFFD)', async () => {
      const { store, leaseMs } = setup();
      const base = freshKey();
      const [first, ...others] = [`${base}\ud800`, `${base}\udc00`, `${base}\ufffd`, `${base}\udbff`];
      const token = claimed(await store.claim(first as string, leaseMs));
      expect(await store.complete(first as string, token, LONG_RETENTION_MS)).toBe(true);
      for (const key of others) {
        const other = claimed(await store.claim(key, leaseMs));
        expect(await store.complete(key, other, LONG_RETENTION_MS)).toBe(true);
      }
      expect(await store.claim(first as string, leaseMs)).toEqual({ status: 'duplicate' });
    });

    it('answers duplicate after the owner completes', async () => {
      const { store, leaseMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      expect(await store.complete(key, token, LONG_RETENTION_MS)).toBe(true);
      expect(await store.claim(key, leaseMs)).toEqual({ status: 'duplicate' });
      expect(await store.claim(key, leaseMs)).toEqual({ status: 'duplicate' });
    });

    it('ignores complete and release with a token that does not own the key', async () => {
      const { store, leaseMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      expect(await store.complete(key, 'not-the-owner', LONG_RETENTION_MS)).toBe(false);
      expect(await store.release(key, 'not-the-owner')).toBe(false);
      expect((await store.claim(key, leaseMs)).status).toBe('in_flight');
      expect(await store.complete(key, token, LONG_RETENTION_MS)).toBe(true);
      expect(await store.release(key, token)).toBe(false);
      expect((await store.claim(key, leaseMs)).status).toBe('duplicate');
    });

    it('release lets the next claim take the key with a new token', async () => {
      const { store, leaseMs } = setup();
      const key = freshKey();
      const first = claimed(await store.claim(key, leaseMs));
      expect(await store.release(key, first)).toBe(true);
      const second = claimed(await store.claim(key, leaseMs));
      expect(second).not.toBe(first);
      expect(await store.release(key, first)).toBe(false);
      expect(await store.complete(key, first, LONG_RETENTION_MS)).toBe(false);
      expect(await store.complete(key, second, LONG_RETENTION_MS)).toBe(true);
    });

    it('lets a new claim take over once the lease expired', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const first = claimed(await store.claim(key, leaseMs));
      await advance(leaseMs + slackMs);
      const second = claimed(await store.claim(key, leaseMs));
      expect(second).not.toBe(first);
      expect((await store.claim(key, leaseMs)).status).toBe('in_flight');
    });

    it('a late complete or release from the expired owner changes nothing of the newer claim', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const expired = claimed(await store.claim(key, leaseMs));
      await advance(leaseMs + slackMs);
      const current = claimed(await store.claim(key, leaseMs));
      expect(await store.complete(key, expired, LONG_RETENTION_MS)).toBe(false);
      expect(await store.release(key, expired)).toBe(false);
      expect((await store.claim(key, leaseMs)).status).toBe('in_flight');
      expect(await store.complete(key, current, LONG_RETENTION_MS)).toBe(true);
      expect((await store.claim(key, leaseMs)).status).toBe('duplicate');
    });

    it('an owner whose lease expired but was not taken over still completes', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      await advance(leaseMs + slackMs);
      expect(await store.complete(key, token, LONG_RETENTION_MS)).toBe(true);
      expect((await store.claim(key, leaseMs)).status).toBe('duplicate');
    });

    it('forgets a completion after its retention', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      expect(await store.complete(key, token, RETENTION_MS)).toBe(true);
      expect((await store.claim(key, leaseMs)).status).toBe('duplicate');
      await advance(RETENTION_MS + slackMs);
      claimed(await store.claim(key, leaseMs));
    });

    it('gives a key claimed concurrently to exactly one claimant', async () => {
      const { store, leaseMs } = setup();
      for (let round = 0; round < 3; round++) {
        const key = freshKey();
        const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(key, leaseMs * 10)));
        const statuses = results.map((result) => result.status);
        expect(statuses.filter((status) => status === 'claimed')).toHaveLength(1);
        expect(statuses.filter((status) => status === 'in_flight')).toHaveLength(19);
      }
    });

    it('renew extends a live lease: a claim past the first lease still finds it in flight', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const token = claimed(await store.claim(key, leaseMs));
      await advance(leaseMs / 2);
      expect(await store.renew(key, token, 2 * (leaseMs + slackMs))).toBe(true);
      // Past the first lease for sure, well inside the renewed one.
      await advance(leaseMs + slackMs);
      expect((await store.claim(key, leaseMs)).status).toBe('in_flight');
      expect(await store.complete(key, token, LONG_RETENTION_MS)).toBe(true);
    });

    it('renew with a token that lost the key is false and changes nothing', async () => {
      const { store, leaseMs, advance, slackMs } = setup();
      const key = freshKey();
      const stale = claimed(await store.claim(key, leaseMs));
      await advance(leaseMs + slackMs);
      const current = claimed(await store.claim(key, leaseMs));
      expect(await store.renew(key, stale, leaseMs * 100)).toBe(false);
      expect(await store.renew(key, 'not-the-owner', leaseMs * 100)).toBe(false);
      await advance(leaseMs + slackMs);
      // The current lease was not stretched by the stale renewals: it expired and is taken over.
      claimed(await store.claim(key, leaseMs));
      expect(await store.complete(key, current, LONG_RETENTION_MS)).toBe(false);
    });

    it('renew of a completed or released key is false', async () => {
      const { store, leaseMs } = setup();
      const done = freshKey();
      const token = claimed(await store.claim(done, leaseMs));
      expect(await store.complete(done, token, LONG_RETENTION_MS)).toBe(true);
      expect(await store.renew(done, token, leaseMs)).toBe(false);
      expect(await store.claim(done, leaseMs)).toEqual({ status: 'duplicate' });
      const dropped = freshKey();
      const released = claimed(await store.claim(dropped, leaseMs));
      expect(await store.release(dropped, released)).toBe(true);
      expect(await store.renew(dropped, released, leaseMs)).toBe(false);
      claimed(await store.claim(dropped, leaseMs));
    });

    it('keeps keys apart', async () => {
      const { store, leaseMs } = setup();
      const a = freshKey();
      const b = freshKey();
      const tokenA = claimed(await store.claim(a, leaseMs));
      const tokenB = claimed(await store.claim(b, leaseMs));
      expect(await store.complete(b, tokenA, LONG_RETENTION_MS)).toBe(false);
      expect(await store.complete(a, tokenA, LONG_RETENTION_MS)).toBe(true);
      expect((await store.claim(b, leaseMs)).status).toBe('in_flight');
      expect(await store.release(b, tokenB)).toBe(true);
      expect((await store.claim(a, leaseMs)).status).toBe('duplicate');
      claimed(await store.claim(b, leaseMs));
    });
  });
}
