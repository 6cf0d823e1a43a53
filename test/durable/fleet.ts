import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { expect } from 'vitest';
import { buildPackage } from '../support/harness/build.js';
import { REDIS_URL, spreadDeliveries, testRun } from '../support/harness/cluster.js';
import { type ReceiverProcess, startProcess } from '../support/harness/processes.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { type Attempt, deliverAll, eventIds, tally } from '../support/harness/sender.js';
import { until } from '../support/until.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/fleet-process.mjs', import.meta.url));
export const EVENTS = 1000;
const ATTEMPTS = 4;
/** Jobs each worker runs at once: at most this many of the killed worker's jobs can run a second time. */
const CONCURRENCY = 4;

/** What the test reads back from the engine once the fleet stopped. */
export interface EngineProbe {
  /** Jobs waiting, retrying or running: 0 once every job settled. */
  unsettled(): Promise<number>;
  /** Every job of the run (completed or dead-lettered): one per event. */
  jobs(): Promise<number>;
  /** Event ids of the jobs in the dead-letter. */
  deadLettered(): Promise<string[]>;
}

export interface FleetResult {
  tally: Record<string, number>;
  runTwice: string[];
  /** Events in the killed worker's handlers when it died (its evidence has their start, not their end). */
  killedWorkerInFlight: string[];
  deliverSeconds: number;
  settleSeconds: number;
  /** Events whose handler held a worker's event loop past its lock. */
  blocked: number;
  /** What onError heard in the workers, by code. */
  workerErrors: Record<string, number>;
  /** Events with more than one effect row (engine.effects only). */
  doubledEffects?: string[];
}

/**
 * The fleet proof: 2 receiver processes and 3 worker processes on one engine; 1,000 events delivered 3
 * times each in shuffled order, retried until acknowledged; 10% of handler runs fail, 2% of the events
 * fail every attempt. One worker is SIGKILLed with a job in its handler, one receiver mid-request.
 */
export interface FleetEngine {
  name: 'bullmq' | 'pg-boss' | 'rabbitmq' | 'nats';
  /** The engine's settings for the processes: names unique to the run. */
  config(run: string): Record<string, unknown>;
  probe(run: string): EngineProbe;
  /** Removes what the run left in the engine, and closes the probe. */
  cleanup(run: string): Promise<void>;
  backoffMs: number;
  /** Runs before any process starts (tables the workers write to). */
  prepare?(run: string): Promise<void>;
  /** More settings for each worker process (its index given). */
  workerConfig?(run: string, worker: number): Record<string, unknown>;
  /** Stops the broker and starts it again, while the deliveries go on (after the worker was killed). */
  restartBroker?(): Promise<void>;
  /** The handlers' effects, rows per event: each event that succeeded must have exactly one. */
  effects?(run: string): Promise<Record<string, number>>;
}

export async function runFleet(engine: FleetEngine): Promise<FleetResult> {
  const { run, secret } = testRun();
  const evidence = `mw-test:${run}:evidence:`;
  const redis = createClient({ url: REDIS_URL });
  redis.on('error', () => {});
  await redis.connect();
  const ids = eventIds(run, EVENTS);
  const alwaysFail = ids.filter((_, index) => index % 50 === 7);
  const dist = await buildPackage();
  await engine.prepare?.(run);
  const common = {
    ...engine.config(run),
    engine: engine.name,
    dist,
    secret,
    redisUrl: REDIS_URL,
    attempts: ATTEMPTS,
    backoffMs: engine.backoffMs,
  };
  const processes: ReceiverProcess[] = [];
  try {
    const workerConfig = {
      ...common,
      role: 'worker',
      evidence,
      alwaysFail,
      failRate: 0.1,
      concurrency: CONCURRENCY,
    };
    const workers = await Promise.all(
      [0, 1, 2].map((worker) =>
        startProcess(SCRIPT, {
          ...workerConfig,
          ...engine.workerConfig?.(run, worker),
          worker,
          hangAfter: worker === 0 ? 150 : 0,
        }),
      ),
    );
    const receivers = await Promise.all(
      [0, 1].map(() => startProcess(SCRIPT, { ...common, role: 'receiver' })),
    );
    processes.push(...workers, ...receivers);
    const [victim] = workers as [ReceiverProcess];
    const [doomed] = receivers as [ReceiverProcess];

    const deliveries = shuffle(spreadDeliveries(ids, 3, receivers));
    let answered = 0;
    let receiverKilled = false;
    const started = Date.now();
    const sending = deliverAll(deliveries, {
      secret,
      concurrency: 40,
      deadline: Date.now() + 150_000,
      onAttempt() {
        // A third of the way in, with 40 requests in flight over the two receivers.
        if (++answered === 1000 && !receiverKilled) {
          receiverKilled = true;
          doomed.child.kill('SIGKILL');
        }
      },
    });
    await victim.waitFor((message) => typeof message.hanging === 'string', 120_000);
    victim.child.kill('SIGKILL');
    await engine.restartBroker?.();
    const attempts = await sending;
    const deliverSeconds = (Date.now() - started) / 1000;

    const engineProbe = engine.probe(run);
    await until(async () => (await engineProbe.unsettled()) === 0, 120_000);
    const settleSeconds = (Date.now() - started) / 1000;

    const succeeded = await redis.hGetAll(`${evidence}succeeded`);
    const victimStarted = new Set(await redis.sMembers(`${evidence}started:0`));
    const victimEnded = new Set(await redis.sMembers(`${evidence}ended:0`));
    const lost = ids.filter((id) => !alwaysFail.includes(id) && !(Number(succeeded[id]) >= 1));
    expect(lost, 'events whose handler never succeeded').toEqual([]);
    expect(alwaysFail.filter((id) => succeeded[id] !== undefined)).toEqual([]);
    const effects = await engine.effects?.(run);
    const doubledEffects = effects && Object.keys(effects).filter((id) => (effects[id] ?? 0) > 1);
    if (effects) {
      expect(doubledEffects, 'events whose effect was written twice').toEqual([]);
      expect(Object.keys(effects).sort()).toEqual(ids.filter((id) => !alwaysFail.includes(id)).sort());
    }
    const runTwice = Object.keys(succeeded).filter((id) => Number(succeeded[id]) > 1);
    // With an inbox a handler may end twice (a run whose claim lapsed in a blocked loop is rolled back):
    // the effects, counted above, are what must not double.
    if (!effects) {
      expect(
        runTwice.filter((id) => !victimStarted.has(id)),
        'run twice, not by the killed worker',
      ).toEqual([]);
      expect(runTwice.length).toBeLessThanOrEqual(CONCURRENCY);
    }
    expect(await engineProbe.jobs(), 'one job per event').toBe(EVENTS);
    expect((await engineProbe.deadLettered()).sort()).toEqual(alwaysFail);
    expectEveryDeliveryAnswered(ids, attempts, engine.restartBroker !== undefined);
    return {
      tally: tally(attempts),
      runTwice,
      killedWorkerInFlight: [...victimStarted].filter((id) => !victimEnded.has(id)),
      deliverSeconds,
      settleSeconds,
      blocked: await redis.sCard(`${evidence}blocked`),
      workerErrors: await workerErrors(redis, evidence),
      ...(doubledEffects ? { doubledEffects } : {}),
    };
  } finally {
    await Promise.all(processes.map((process) => process.stop()));
    await engine.cleanup(run);
    await deleteKeys(redis, `mw-test:${run}:*`);
    redis.destroy();
  }
}

async function workerErrors(
  redis: { lRange(key: string, from: number, to: number): Promise<string[]> },
  evidence: string,
) {
  const codes: Record<string, number> = {};
  for (const line of await redis.lRange(`${evidence}errors`, 0, -1)) {
    const { code } = JSON.parse(line) as { code: string };
    codes[code] = (codes[code] ?? 0) + 1;
  }
  return codes;
}

/**
 * 202 for a new job, 200 duplicate or 409 for a known one; a killed receiver's requests got no answer; while the
 * broker restarted, 503 queue_unavailable (the service retries).
 */
function expectEveryDeliveryAnswered(ids: string[], attempts: Attempt[], restarted: boolean): void {
  const labels = new Set(Object.keys(tally(attempts)));
  const expected = ['202', '200 duplicate', '409 event_in_progress', 'network'];
  if (restarted) expected.push('503 queue_unavailable');
  for (const label of labels) expect(expected).toContain(label);
  expect(labels.has('network'), 'requests cut by the killed receiver').toBe(true);
  const acknowledged = new Set(attempts.filter((a) => a.status < 300 && a.status > 0).map((a) => a.eventId));
  expect(acknowledged.size).toBe(ids.length);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
