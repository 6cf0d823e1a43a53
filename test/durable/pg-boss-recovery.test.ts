import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, expect, it } from 'vitest';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { createWorker, type PgBossQueueOptions, pgBossQueue } from '../../src/pg-boss.js';
import { gate } from '../support/gate.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { startProcess } from '../support/harness/processes.js';
import { deliveredEvent, delivery, expectAccepted, SECRET } from '../support/unit.js';

/*
 * How soon the job of a worker killed mid-job runs again: its heartbeat lapses (heartbeatSeconds after the
 * last one), the next supervise pass fails it (superviseIntervalSeconds), it waits out its first retry's
 * backoff (1–2 s) and the next poll takes it.
 */
const SCRIPT = fileURLToPath(new URL('./fixtures/hanging-pg-boss-worker.mjs', import.meta.url));
const { run } = testRun();
const schema = `mw_recovery_${run}`;

afterAll(async () => {
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

/** Seconds from the SIGKILL of the worker running the job to the job running again on another worker. */
async function recoverySeconds(settings: PgBossQueueOptions): Promise<number> {
  const options = { connectionString: DATABASE_URL, schema, attempts: 3, backoffMs: 1000, ...settings };
  const queue = pgBossQueue(options);
  const receiver = createReceiver({ secrets: SECRET, queue });
  const rerun = gate();
  let rerunAt = 0;
  receiver.on('message.delivered', () => {
    rerunAt = performance.now();
    rerun.open();
  });
  const dying = await startProcess(SCRIPT, { dist: await buildPackage(), secret: SECRET, queue: options });
  try {
    const event = deliveredEvent();
    expectAccepted(await receiver.receive(delivery(event)), 202);
    await dying.waitFor((message) => message.running === event.id);
    dying.child.kill('SIGKILL');
    const killedAt = performance.now();
    const worker = await createWorker({ receiver, queue, pollingIntervalSeconds: 0.5 });
    await rerun.opened;
    await worker.close();
    return (rerunAt - killedAt) / 1000;
  } finally {
    await dying.stop();
    await queue.close();
  }
}

it('the settings that govern recovery are checked when the queue is created', () => {
  const create = (settings: PgBossQueueOptions) => () =>
    pgBossQueue({ connectionString: DATABASE_URL, schema, ...settings });
  for (const bad of [9, 10.5, Number.NaN, '30']) {
    expect(create({ heartbeatSeconds: bad as number })).toThrow(
      new RegExp(`heartbeatSeconds must be a whole number of seconds ≥ 10 .*got ${String(bad)}`),
    );
  }
  for (const bad of [0, 0.5, 3601, Number.NaN, '10']) {
    expect(create({ superviseIntervalSeconds: bad as number })).toThrow(
      new RegExp(`superviseIntervalSeconds must be a number of seconds from 1 to 3600, got ${String(bad)}`),
    );
  }
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema });
  expect(() => pgBossQueue({ boss, superviseIntervalSeconds: 5 })).toThrow(WebhookConfigError);
  expect(() => pgBossQueue({ boss, superviseIntervalSeconds: 5 })).toThrow(
    /with your own `boss`, set superviseIntervalSeconds and monitorIntervalSeconds on it/,
  );
});

it('with heartbeatSeconds 10 and superviseIntervalSeconds 1, a killed worker’s job runs again within 20 s', async () => {
  const seconds = await recoverySeconds({ name: 'short', heartbeatSeconds: 10, superviseIntervalSeconds: 1 });
  // 10 s for the heartbeat to lapse, ≤ 1 s to the next pass, 1–2 s of backoff, ≤ 0.5 s to the poll: 12 s
  // measured; the bound leaves room for a busy machine and is far below pg-boss's own 60 s pass.
  expect(seconds).toBeLessThan(20);
}, 60_000);
