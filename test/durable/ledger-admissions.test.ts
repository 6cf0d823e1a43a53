import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LedgerPool, openLedger } from '../../src/durable/ledger/ledger.js';
import type { DurableJob } from '../../src/durable/port.js';
import { DATABASE_URL } from '../support/harness/cluster.js';

// The ledger's admissions against PostgreSQL: handoffs made together share statements, and each copy of an
// event is still answered as if it came alone.
const run = randomUUID().replaceAll('-', '').slice(0, 8);
const table = `mw_admissions_${run}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });

/** The pool, counting the admission statements it was sent and failing them while `failing` is set. */
function countingPool() {
  const counted = { statements: 0, failing: false };
  const wrapped: LedgerPool = {
    query: (text, values) => {
      if (text.trimStart().startsWith('WITH input')) {
        counted.statements++;
        if (counted.failing) return Promise.reject(new Error('connection terminated unexpectedly'));
      }
      return pool.query(text, values) as ReturnType<LedgerPool['query']>;
    },
    connect: () => pool.connect(),
    end: async () => {},
  };
  return { counted, wrapped };
}

const job = (key: string): DurableJob => ({
  key,
  event: { id: key, type: 'message.delivered', created_at: '2026-11-28T10:00:00+00:00', data: {} },
  ctx: { requestId: 'req_1', mode: 'test', timestamp: 0, dedupeKey: key },
});

beforeAll(async () => {
  await pool.query('SELECT 1');
});

afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
});

describe('the ledger admits handoffs made together in shared statements', () => {
  it('writes many concurrent handoffs in fewer statements, each answered enqueued', async () => {
    const { counted, wrapped } = countingPool();
    const ledger = openLedger({ pool: wrapped, table }, `many-${run}`, 'test');
    await ledger.ready();
    const keys = Array.from({ length: 64 }, (_, i) => `evt_many_${i}`);
    const answers = await Promise.all(keys.map((key) => ledger.admit(job(key))));
    expect(answers).toEqual(keys.map(() => 'enqueued'));
    expect(counted.statements).toBeLessThan(keys.length / 4);
    expect((await ledger.statesOf(keys)).size).toBe(keys.length);
  });

  it('answers copies of one event made together: one enqueued, the others in progress', async () => {
    const ledger = openLedger({ pool, table }, `copies-${run}`, 'test');
    await ledger.ready();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => ledger.admit(job(i % 2 ? 'evt_a' : 'evt_b'))),
    );
    expect(answers.filter((answer) => answer === 'enqueued')).toHaveLength(2);
    expect(answers.filter((answer) => answer === 'in_progress')).toHaveLength(4);
    expect(await ledger.admit(job('evt_a'))).toBe('in_progress');
  });

  it('answers duplicate for an event completed or dead, beside new ones in the same statement', async () => {
    const ledger = openLedger({ pool, table }, `settled-${run}`, 'test');
    await Promise.all([ledger.admit(job('evt_done')), ledger.admit(job('evt_dead'))]);
    const claim = await ledger.claim('evt_done', 30_000);
    if (!claim.run) throw new Error('the claim of a queued event must run');
    await ledger.complete('evt_done', claim.token, 60_000);
    await ledger.bury('evt_dead', null, 'handler_failed', 'poison');
    const answers = await Promise.all(
      ['evt_done', 'evt_new', 'evt_dead'].map((key) => ledger.admit(job(key))),
    );
    expect(answers).toEqual(['duplicate', 'enqueued', 'duplicate']);
  });

  it('rejects every handoff of a failed statement with its error, and admits the next ones', async () => {
    const { counted, wrapped } = countingPool();
    const ledger = openLedger({ pool: wrapped, table }, `failing-${run}`, 'test');
    await ledger.ready();
    counted.failing = true;
    const failed = await Promise.allSettled(['evt_x', 'evt_y', 'evt_z'].map((key) => ledger.admit(job(key))));
    expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((failed[0] as PromiseRejectedResult).reason)).toMatch(/connection terminated/);
    counted.failing = false;
    expect(await ledger.admit(job('evt_x'))).toBe('enqueued');
  });
});
