import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { PostgresDedupeStore } from '../../src/stores/postgres.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { DATABASE_URL } from '../support/harness/cluster.js';

/*
 * A connection of the transactional store dies while its handler holds it (a failover, a restart,
 * pg_terminate_backend). pg-pool takes its own error listener off a client it hands out: unheard, the client's
 * 'error' would crash the process. Here the process lives, the event is answered 503 with Retry-After (the
 * store failed, not the handler), nothing of it committed, and the pool serves the next deliveries.
 */
const secret = 'whsec_connection_loss';
const table = `mw_loss_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const effects = `${table}_effects`;
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, connectionTimeoutMillis: 2000 });
pool.on('error', () => {});
const store = new PostgresDedupeStore({ pool, table, transactional: true });

beforeAll(async () => {
  await store.migrate();
  await admin.query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);
});

afterAll(async () => {
  await admin.query(`DROP TABLE IF EXISTS "${table}", ${effects}`);
  await Promise.all([pool.end(), admin.end()]);
});

it('a connection terminated mid-transaction: the process lives, 503 with Retry-After, the next ones processed', async () => {
  const inHandler = gate();
  const terminated = gate();
  let backend: number | undefined;
  const receiver = createReceiver({ secrets: secret, store });
  receiver.onError(() => {});
  receiver.on('message.delivered', async (event, ctx) => {
    await ctx.tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [event.id]);
    if (event.id !== 'evt_cut') return;
    backend = (ctx.tx as unknown as { processID: number }).processID;
    inHandler.open();
    await terminated.opened;
    await ctx.tx.query('SELECT 1');
  });
  const deliver = (id: string) => {
    const { body, headers } = createSignedRequest(createEvent('message.delivered', { id }), { secret });
    return receiver.receive({ method: 'POST', headers, rawBody: body });
  };

  const cut = deliver('evt_cut');
  await inHandler.opened;
  const { rows } = await admin.query('SELECT pg_terminate_backend($1) AS done', [backend]);
  expect(rows[0].done).toBe(true);
  terminated.open();
  const outcome = await cut;
  expect(outcome.status).toBe(503);
  expect(JSON.parse(outcome.body as string).error.code).toBe('store_unavailable');
  expect(Number(outcome.headers['retry-after'])).toBeGreaterThan(0);

  const next = await Promise.all(['evt_after_1', 'evt_after_2', 'evt_cut'].map(deliver));
  expect(next.map((answer) => answer.status)).toEqual([200, 200, 200]);
  const { rows: done } = await admin.query(`SELECT event_id FROM ${effects} ORDER BY event_id`);
  expect(done.map((row) => row.event_id)).toEqual(['evt_after_1', 'evt_after_2', 'evt_cut']);
  await receiver.close();
});
