import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetters, DurableQueue } from '../../src/index.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/child-processes.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import type { DeadLetterHarness } from './dead-letters-conformance.js';
import { poisonedQueue } from './dead-letters-conformance.js';
import { NATS_URL, natsHarness, natsQueues } from './nats-engine.js';
import { RABBITMQ_URL, rabbitmqHarness, rabbitmqQueues } from './rabbitmq-engine.js';

/* `messaging-webhooks dead-letter --engine rabbitmq|nats`, run as a user runs it, on the real brokers. */
const { run } = testRun();
const rabbitmq = rabbitmqHarness(run);
const nats = natsHarness(run);
const closers: (() => Promise<unknown>)[] = [];

beforeAll(ensureBuilt, 180_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await rabbitmq.cleanup();
  await nats.cleanup();
});

async function poisoned<Q extends DurableQueue & { name: string }>(harness: DeadLetterHarness<Q>) {
  const one = poisonedQueue(harness, 1);
  const deadLetters: DeadLetters = harness.deadLetters(one.queue);
  const worker = await harness.worker(one.receiver, one.queue);
  closers.push(
    () => one.queue.close?.() ?? Promise.resolve(),
    () => deadLetters.close(),
    () => worker.close(),
  );
  const [id] = (await one.poison(1, deadLetters)) as [string];
  return { ...one, id };
}

const cases = [
  {
    engine: 'rabbitmq',
    harness: rabbitmq,
    flags: ['--amqp-url', RABBITMQ_URL, '--table', rabbitmqQueues(run, 'dl').table],
  },
  { engine: 'nats', harness: nats, flags: ['--nats-url', NATS_URL, '--table', natsQueues(run, 'dl').table] },
] as const;

describe.each(cases)('messaging-webhooks dead-letter --engine $engine', ({ engine, harness, flags }) => {
  it('lists the dead letters from the ledger, and replays one that then runs', async () => {
    const { queue, id, state, ranOnce } = await poisoned(
      harness as DeadLetterHarness<DurableQueue & { name: string }>,
    );
    const all = ['--engine', engine, ...flags, '--database-url', DATABASE_URL, '--queue', queue.name];
    const listed = await runCli(['dead-letter', 'list', '--json', ...all]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 1, deadLetters: [{ id, attempts: 1 }] });
    state.poisoned = false;
    const replayed = await runCli(['dead-letter', 'replay', id, '--yes', ...all]);
    expect(replayed.code, replayed.stderr).toBe(0);
    await ranOnce(id);
    const missing = await runCli(['dead-letter', 'list', '--engine', engine, '--queue', queue.name]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/ledger in PostgreSQL: pass --database-url/);
  }, 60_000);
});
