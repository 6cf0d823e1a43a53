import { fileURLToPath } from 'node:url';
import { PgBoss } from 'pg-boss';
import { afterAll, expect, it } from 'vitest';
import {
  createPgBossWorker as createWorker,
  type PgBossQueueOptions,
  pgBossJobId,
  pgBossQueue,
} from '../../src/durable/pg-boss/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { gate } from '../support/gate.js';
import { buildPackage } from '../support/harness/build.js';
import { DATABASE_URL, dropSchema, testRun } from '../support/harness/cluster.js';
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
  await dropSchema(schema);
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
  // A string is quoted in the message: a number read from the environment shows as the string it is.
  const shown = (bad: unknown) => (typeof bad === 'string' ? JSON.stringify(bad) : String(bad));
  for (const bad of [9, 10.5, Number.NaN, '30']) {
    expect(create({ heartbeatSeconds: bad as number })).toThrow(
      `heartbeatSeconds must be a whole number of seconds (10 or more: pg-boss's floor), got ${shown(bad)}.`,
    );
  }
  for (const bad of [0, 0.5, 3601, Number.NaN, '10']) {
    expect(create({ superviseIntervalSeconds: bad as number })).toThrow(
      `superviseIntervalSeconds must be a number of seconds from 1 to 3600, got ${shown(bad)}.`,
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

it('a job pg-boss dead-letters itself (the heartbeat of its last attempt lapsed) reaches onError once, from a live worker', async () => {
  const options = {
    connectionString: DATABASE_URL,
    schema,
    name: 'silent',
    attempts: 1,
    heartbeatSeconds: 10,
    superviseIntervalSeconds: 1,
  };
  const queue = pgBossQueue(options);
  const receiver = createReceiver({ secrets: SECRET, queue });
  const told: { code: string; eventId?: string; attempt?: number; attempts?: number; message: string }[] = [];
  const reported = gate();
  receiver.onError((error, ctx) => {
    told.push({
      code: error.code,
      eventId: ctx.eventId,
      attempt: ctx.attempt,
      attempts: ctx.attempts,
      message: error.message,
    });
    reported.open();
  });
  const dying = await startProcess(SCRIPT, { dist: await buildPackage(), secret: SECRET, queue: options });
  // Two live workers look at once: the one atomic mark lets exactly one of them tell.
  const workers = [];
  try {
    const event = deliveredEvent();
    expectAccepted(await receiver.receive(delivery(event)), 202);
    await dying.waitFor((message) => message.running === event.id);
    dying.child.kill('SIGKILL');
    for (let i = 0; i < 2; i++)
      workers.push(await createWorker({ receiver, queue, pollingIntervalSeconds: 0.5 }));
    await reported.opened;
    // The job is marked reported in the same statement that handed it to one worker: the other finds nothing.
    const table = (await queue.boss.getQueue('silent'))?.table;
    const { rows } = await queue.boss
      .getDb()
      .executeSql(`SELECT output FROM "${schema}"."${table}" WHERE id = $1`, [
        pgBossJobId(`live:${event.id}`),
      ]);
    expect(rows[0]?.output).toMatchObject({ reported: true, value: { message: 'job heartbeat timeout' } });
    for (const worker of workers.splice(0)) await worker.close();
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ code: 'job_stalled', eventId: event.id, attempt: 1, attempts: 1 });
    expect(told[0]?.message).toMatch(/pg-boss: job heartbeat timeout/);
  } finally {
    for (const worker of workers) await worker.close();
    await dying.stop();
    await queue.close();
  }
}, 60_000);
