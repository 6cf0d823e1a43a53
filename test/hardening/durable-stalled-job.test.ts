import { fileURLToPath } from 'node:url';
import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bullmqQueue } from '../../src/durable/bullmq/index.js';
import { createReceiver, type ErrorContext } from '../../src/index.js';
import { buildPackage } from '../support/harness/build.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { type ReceiverProcess, startProcess } from '../support/harness/processes.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { deliveredEvent, delivery, expectAccepted } from '../support/unit.js';
import { until } from '../support/until.js';

const SCRIPT = fileURLToPath(new URL('../durable/fixtures/fleet-process.mjs', import.meta.url));
const { run, secret } = testRun();
const prefix = `mw-test:${run}:bull`;
const evidence = `mw-test:${run}:evidence:`;
const redis = createClient({ url: REDIS_URL });
const processes: ReceiverProcess[] = [];
let dist: string;

beforeAll(async () => {
  // Outside the test's time limit: the first build on a busy machine takes a while.
  dist = await buildPackage();
  await redis.connect();
});
afterAll(async () => {
  await Promise.all(processes.map((process) => process.stop()));
  await deleteKeys(redis, `mw-test:${run}:*`);
  redis.destroy();
});

it('BullMQ: a job whose worker is SIGKILLed twice goes to the dead-letter, and a live worker tells onError job_stalled', async () => {
  const queue = bullmqQueue({
    connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
    prefix,
    name: 'stall',
    attempts: 3,
    backoffMs: 100,
    // The shared test Redis runs without persistence; the persistence check has its own test.
    allowVolatileRedis: true,
  });
  const receiver = createReceiver({ secrets: secret, queue });
  const event = deliveredEvent();
  expectAccepted(await receiver.receive(delivery(event, { secret })), 202);
  const worker = (index: number, hang: boolean) =>
    startProcess(SCRIPT, {
      engine: 'bullmq',
      role: 'worker',
      dist,
      secret,
      redisUrl: REDIS_URL,
      prefix,
      name: 'stall',
      attempts: 3,
      backoffMs: 100,
      evidence,
      alwaysFail: [],
      failRate: 0,
      concurrency: 1,
      lockDurationMs: 1000,
      worker: index,
      hangAfter: hang ? 1 : 0,
    });
  const started = Date.now();
  // Two workers in turn take the job and die with it: its lock lapses twice (BullMQ's maxStalledCount is 1).
  // Started before each kill, so the time from a SIGKILL to the job's next run is the engine's alone.
  const workers = [await worker(0, true), await worker(1, true)];
  processes.push(...workers);
  const rerunMs: number[] = [];
  const [first, second] = workers as [ReceiverProcess, ReceiverProcess];
  await first.waitFor((message) => message.hanging === event.id, 20_000);
  first.child.kill('SIGKILL');
  const killed = Date.now();
  await second.waitFor((message) => message.hanging === event.id, 20_000);
  rerunMs.push(Date.now() - killed);
  second.child.kill('SIGKILL');
  // Started only now, so that it is the live worker that finds the job stalled a second time.
  processes.push(await worker(2, false));
  let told: (ErrorContext & { code: string }) | undefined;
  await until(async () => {
    const errors = await redis.lRange(`${evidence}errors`, 0, -1);
    told = errors.map((line) => JSON.parse(line)).find((error) => error.eventId === event.id);
    return told !== undefined;
  }, 30_000);
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `BullMQ stall: ran again ${rerunMs[0]} ms after its worker was killed (lock 1000 ms); dead-lettered and told ${JSON.stringify(told)} after ${seconds} s`,
  );
  expect(told).toMatchObject({ code: 'job_stalled', reason: 'job_stalled', attempts: 3 });
  expect((await queue.queue.getFailed()).map((job) => job.data.event.id)).toEqual([event.id]);
  await queue.close();
}, 60_000);
