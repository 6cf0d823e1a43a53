import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import type { DedupeStore } from '../../src/stores/types.js';
import { createEvent } from '../../src/testing.js';
import { SECRET } from '../hardening/targets.js';
import { signedDelivery } from '../support/independent-signing.js';
import { until } from '../support/until.js';

export interface TransactionalTarget<Tx> {
  /** The store in transactional mode. */
  store: DedupeStore<Tx>;
  /** Writes one row for `eventId` through the store's transaction, as a handler would through ctx.tx. */
  write(tx: Tx, eventId: string): Promise<unknown>;
  /** How many rows exist for `eventId`, read outside any transaction. */
  rows(eventId: string): Promise<number>;
}

/**
 * What a transactional store promises beyond the claim contract: the handlers' writes and the completion
 * commit together or not at all, and the receiver answers by what committed. Every transactional store (raw
 * driver or ORM, PostgreSQL or MySQL) runs it against the real database.
 */
export function describeTransactionalInbox<Tx>(name: string, setup: () => TransactionalTarget<Tx>): void {
  describe(`${name} transactional inbox`, () => {
    const run = randomUUID().slice(0, 8);
    let n = 0;
    const fresh = () => `evt_tx_${run}_${++n}`;
    const claimToken = async (key: string, leaseMs = 5000) => {
      const claim = await setup().store.claim(key, leaseMs);
      expect(claim.status).toBe('claimed');
      return (claim as { token: string }).token;
    };

    it('commits the work and the completion together', async () => {
      const { store, write, rows } = setup();
      const id = fresh();
      const token = await claimToken(`live:${id}`);
      const result = await store.transact?.(`live:${id}`, token, 60_000, async (tx) => {
        await write(tx, id);
        return 'done';
      });
      expect(result).toBe('done');
      expect(await rows(id)).toBe(1);
      expect(await store.claim(`live:${id}`, 1000)).toEqual({ status: 'duplicate' });
    });

    it('rolls the work back when it throws, and leaves the claim to be released', async () => {
      const { store, write, rows } = setup();
      const id = fresh();
      const token = await claimToken(`live:${id}`);
      const failure = new Error('handler failed');
      await expect(
        store.transact?.(`live:${id}`, token, 60_000, async (tx) => {
          await write(tx, id);
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await rows(id)).toBe(0);
      expect(await store.release(`live:${id}`, token)).toBe(true);
    });

    it('rolls the work back when the claim was taken over while it ran', async () => {
      const { store, write, rows } = setup();
      const id = fresh();
      const key = `live:${id}`;
      const stale = await claimToken(key, 100);
      let current: string | undefined;
      await expect(
        store.transact?.(key, stale, 60_000, async (tx) => {
          await write(tx, id);
          // The handler outlives its 100 ms lease, which the database's clock ends: another delivery's claim
          // takes the event over while the handler still runs.
          await until(
            async () => {
              const claim = await store.claim(key, 5000);
              if (claim.status === 'claimed') current = claim.token;
              return current !== undefined;
            },
            { what: 'a second claim to take the expired lease over' },
          );
        }),
      ).rejects.toThrow(/taken over/);
      expect(await rows(id)).toBe(0);
      expect(await store.complete(key, current as string, 60_000)).toBe(true);
    });

    describeClaimInTransaction(setup, fresh);

    it('under a receiver: 200 with the row once, a failing handler 500 with no row, then the retry commits', async () => {
      const { store, write, rows } = setup();
      const receiver = createReceiver({ secrets: SECRET, store: store as DedupeStore<unknown> });
      let fail = true;
      receiver.onAny(async (event, ctx) => {
        await write(ctx.tx as Tx, String(event.id));
        if (fail) throw new Error('handler failed after its write');
      });
      receiver.onError(() => {});
      const id = fresh();
      const body = JSON.stringify(createEvent('message.delivered', { id }));
      const deliver = () => receiver.receive(signedDelivery(body));
      expect((await deliver()).status).toBe(500);
      expect(await rows(id)).toBe(0);
      fail = false;
      expect((await deliver()).status).toBe(200);
      expect(await deliver()).toMatchObject({ status: 200, duplicate: true });
      expect(await rows(id)).toBe(1);
      await receiver.close({ timeoutMs: 1000 });
    });
  });
}

/** The claim as the first statement of the event's transaction, for the stores that offer it. */
function describeClaimInTransaction<Tx>(setup: () => TransactionalTarget<Tx>, fresh: () => string): void {
  const open = async (key: string, leaseMs = 5000) => {
    const claimInTransaction = setup().store.claimInTransaction;
    if (!claimInTransaction) throw new Error('the store has no claimInTransaction');
    return claimInTransaction.call(setup().store, key, leaseMs);
  };
  const claimed = async (key: string, leaseMs?: number) => {
    const opened = await open(key, leaseMs);
    if (opened.status !== 'claimed') throw new Error(`expected a claim, got ${opened.status}`);
    return opened;
  };
  const offered = () => typeof setup().store.claimInTransaction === 'function';

  describe('claimed inside the transaction', () => {
    it('commits the claim, the work and the completion together', async ({ skip }) => {
      if (!offered()) skip();
      const { store, write, rows } = setup();
      const id = fresh();
      const taken = await claimed(`live:${id}`);
      const done = await taken.run(60_000, async (tx) => {
        await write(tx, id);
        return 'done';
      });
      expect(done).toBe('done');
      expect(await rows(id)).toBe(1);
      expect(await store.claim(`live:${id}`, 1000)).toEqual({ status: 'duplicate' });
      expect(await open(`live:${id}`)).toEqual({ status: 'duplicate' });
    });

    it('answers an event claimed in another open transaction in flight, and runs it once', async ({
      skip,
    }) => {
      if (!offered()) skip();
      const { write, rows } = setup();
      const id = fresh();
      const key = `live:${id}`;
      const [first, second] = await Promise.all([open(key), open(key)]);
      const statuses = [first.status, second.status].sort();
      expect(statuses).toEqual(['claimed', 'in_flight']);
      const holder = first.status === 'claimed' ? first : second;
      if (holder.status !== 'claimed') throw new Error('unreachable');
      expect(await open(key)).toMatchObject({ status: 'in_flight' });
      await holder.run(60_000, (tx) => write(tx, id));
      expect(await open(key)).toEqual({ status: 'duplicate' });
      expect(await rows(id)).toBe(1);
    });

    it('abandon rolls the claim back: the key is free at once', async ({ skip }) => {
      if (!offered()) skip();
      const { write, rows } = setup();
      const id = fresh();
      await (await claimed(`live:${id}`)).abandon();
      await (await claimed(`live:${id}`)).run(60_000, (tx) => write(tx, id));
      expect(await rows(id)).toBe(1);
    });

    it('a failing run rolls back the work and the claim', async ({ skip }) => {
      if (!offered()) skip();
      const { write, rows } = setup();
      const id = fresh();
      const failure = new Error('handler failed');
      const taken = await claimed(`live:${id}`);
      await expect(
        taken.run(60_000, async (tx) => {
          await write(tx, id);
          throw failure;
        }),
      ).rejects.toBe(failure);
      await taken.abandon();
      expect(await rows(id)).toBe(0);
      await (await claimed(`live:${id}`)).run(60_000, (tx) => write(tx, id));
      expect(await rows(id)).toBe(1);
    });

    it('takes a lapsed lease over, and the lapsed owner can no longer complete', async ({ skip }) => {
      if (!offered()) skip();
      const { store, write, rows } = setup();
      const id = fresh();
      const key = `live:${id}`;
      const stale = await store.claim(key, 100);
      if (stale.status !== 'claimed') throw new Error('expected a claim');
      let taken: Awaited<ReturnType<typeof claimed>> | undefined;
      await until(
        async () => {
          const attempt = await open(key);
          if (attempt.status === 'claimed') taken = attempt;
          return taken !== undefined;
        },
        { what: 'a claim in a transaction to take the lapsed lease over' },
      );
      await taken?.run(60_000, (tx) => write(tx, id));
      expect(await store.complete(key, stale.token, 60_000)).toBe(false);
      expect(await rows(id)).toBe(1);
      expect(await open(key)).toEqual({ status: 'duplicate' });
    });
  });
}
