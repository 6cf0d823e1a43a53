import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLedger, REPUBLISH_AFTER_MS } from '../../src/durable/ledger/ledger.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';

/*
 * The ledger's admission of one event's row, each state it can find: a new key is written, a key queued lately
 * or running is in progress, a settled one is a duplicate, and a row whose dedupe window ended or that sat
 * queued past REPUBLISH_AFTER_MS is written again (the caller publishes).
 */
const { run } = testRun();
const table = `mw_jobs_admit_${run}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
const ledger = openLedger({ pool, table }, 'admit-queue', 'test');
const job = (key: string) => JSON.stringify({ key, event: { type: 'message.delivered', id: key }, ctx: {} });
const set = (key: string, change: string) =>
  pool.query(`UPDATE "${table}" SET ${change} WHERE queue = 'admit-queue' AND key = $1`, [
    JSON.stringify(key),
  ]);
const row = async (key: string) =>
  (await pool.query(`SELECT state, attempt, job FROM "${table}" WHERE key = $1`, [JSON.stringify(key)]))
    .rows[0];

beforeAll(() => ledger.ready());
afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
});

it('writes a new key once; a copy while it is queued, retrying or running is in progress', async () => {
  expect(await ledger.admit('live:evt_new', job('live:evt_new'))).toBe('enqueued');
  expect(await ledger.admit('live:evt_new', job('live:evt_new'))).toBe('in_progress');
  await set('live:evt_new', `state = 'running'`);
  expect(await ledger.admit('live:evt_new', job('live:evt_new'))).toBe('in_progress');
  await set('live:evt_new', `state = 'retrying', changed_at = now() + interval '1 minute'`);
  expect(await ledger.admit('live:evt_new', job('live:evt_new'))).toBe('in_progress');
});

it('answers a settled event as a duplicate until its dedupe window ended, then writes it again', async () => {
  const key = 'live:evt_settled';
  expect(await ledger.admit(key, job(key))).toBe('enqueued');
  await set(key, `state = 'completed', attempt = 2, expires_at = now() + interval '1 hour'`);
  expect(await ledger.admit(key, job(key))).toBe('duplicate');
  await set(key, `state = 'dead'`);
  expect(await ledger.admit(key, job(key))).toBe('duplicate');
  await set(key, `state = 'completed', expires_at = now() - interval '1 second'`);
  expect(await ledger.admit(key, `${job(key)} `)).toBe('enqueued');
  expect(await row(key)).toEqual({ state: 'queued', attempt: 0, job: `${job(key)} ` });
  expect(await ledger.admit(key, job(key))).toBe('in_progress');
});

it('writes again a row queued longer than REPUBLISH_AFTER_MS (its handoff may never have reached the broker)', async () => {
  const key = 'live:evt_stale';
  expect(await ledger.admit(key, job(key))).toBe('enqueued');
  await set(key, `attempt = 1, changed_at = now() - make_interval(secs => ${REPUBLISH_AFTER_MS / 1000 + 1})`);
  expect(await ledger.admit(key, job(key))).toBe('enqueued');
  expect(await row(key)).toMatchObject({ state: 'queued', attempt: 1 });
  expect(await ledger.admit(key, job(key))).toBe('in_progress');
});
