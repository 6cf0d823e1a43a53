import { afterAll, describe, expect, it } from 'vitest';
import { pgBossDeadLetters, pgBossJobId, pgBossQueue } from '../../src/durable/pg-boss/index.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { deliveredEvent, delivery, expectAccepted } from '../support/unit.js';
import { pgBossHarness } from './dead-letter-engines.js';
import { describeDeadLetters, poisonedQueue } from './dead-letters-conformance.js';

const { run } = testRun();
const schema = `mw_dl_${run}`;
const harness = pgBossHarness(schema);
describeDeadLetters('pg-boss', harness);

const closers: (() => Promise<unknown>)[] = [];
/** A dead letter whose failed job is gone from its queue, as pg-boss's retention removes it after retentionMs. */
async function retained() {
  const poisoned = poisonedQueue(harness, 1);
  const deadLetters = pgBossDeadLetters({ queue: poisoned.queue });
  const start = async () => {
    const worker = await harness.worker(poisoned.receiver, poisoned.queue);
    closers.push(() => worker.close({ timeoutMs: 1000 }));
    return worker;
  };
  closers.push(
    () => deadLetters.close(),
    () => poisoned.queue.close(),
  );
  const first = await start();
  const [id] = (await poisoned.poison(1, deadLetters)) as [string];
  await first.close();
  const { boss, name } = poisoned.queue;
  const table = (await boss.getQueue(name))?.table;
  const jobId = pgBossJobId(`live:${id}`);
  await boss
    .getDb()
    .executeSql(`DELETE FROM "${schema}"."${table}" WHERE name = $1 AND id = $2`, [name, jobId]);
  poisoned.state.poisoned = false;
  return { ...poisoned, deadLetters, start, id };
}

describe('pg-boss: a dead letter whose job left the queue', () => {
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('is replayed as a new job under the same id, and runs once', async () => {
    const { deadLetters, start, id, state, ranOnce, completed } = await retained();
    expect(await deadLetters.replay([id])).toEqual({ replayed: [id], skipped: [] });
    expect(await deadLetters.show(id)).toBeUndefined();
    await start();
    await ranOnce(id);
    await completed(id);
    expect(state.runs.get(id)).toEqual([1]);
  }, 30_000);

  it('is skipped while a new delivery of its event is queued, and the event runs once', async () => {
    const { deadLetters, start, id, state, ranOnce, completed, receiver } = await retained();
    expectAccepted(await receiver.receive(delivery({ ...deliveredEvent(), id })), 202);
    expect(await deadLetters.replay([id])).toMatchObject({ replayed: [], skipped: [{ id, reason: 'live' }] });
    expect(await deadLetters.show(id)).toMatchObject({ id });
    await start();
    await ranOnce(id);
    await completed(id);
    expect(await deadLetters.replay([id])).toMatchObject({ skipped: [{ id, reason: 'completed' }] });
    // The stale copy goes; the completed job stays, keeping a redelivery a duplicate.
    expect(await deadLetters.purge([id])).toEqual({ purged: [id], skipped: [] });
    expectAccepted(await receiver.receive(delivery({ ...deliveredEvent(), id })), 200, true);
    expect(state.runs.get(id)).toEqual([1]);
  }, 30_000);
});

describe('pg-boss: dead letters made under an earlier, shorter retention', () => {
  it('are kept as long as the dead-letter queue keeps its own once a queue starts', async () => {
    const poisoned = poisonedQueue(harness, 1);
    const deadLetters = pgBossDeadLetters({ queue: poisoned.queue });
    closers.push(
      () => deadLetters.close(),
      () => poisoned.queue.close(),
    );
    const worker = await harness.worker(poisoned.receiver, poisoned.queue);
    closers.push(() => worker.close({ timeoutMs: 1000 }));
    await poisoned.poison(1, deadLetters);
    const { boss, name } = poisoned.queue;
    const dead = await boss.getQueue(`${name}_dead_letter`);
    const table = `"${schema}"."${dead?.table}"`;
    const keptFor = async () =>
      Number(
        (
          await boss
            .getDb()
            .executeSql(
              `SELECT extract(epoch FROM min(keep_until) - now()) AS s FROM ${table} WHERE name = $1`,
              [`${name}_dead_letter`],
            )
        ).rows[0]?.s,
      );
    // As the 7-day retention of completed events gave them before.
    await boss
      .getDb()
      .executeSql(`UPDATE ${table} SET keep_until = now() + interval '7 days' WHERE name = $1`, [
        `${name}_dead_letter`,
      ]);
    expect(await keptFor()).toBeLessThan(8 * 86_400);
    const again = pgBossQueue({ connectionString: DATABASE_URL, schema, name, attempts: 1 });
    closers.push(() => again.close());
    await again.ready();
    expect(await keptFor()).toBeGreaterThan(50 * 365 * 86_400);
  }, 30_000);
});

afterAll(() => harness.cleanup());
