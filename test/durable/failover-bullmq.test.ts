import { createNodeRedisClient } from 'bullmq';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDeadLetters } from '../../src/cli/dead-letter-connect.js';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import type { DurableWorker } from '../../src/durable/port.js';
import { createReceiver } from '../../src/index.js';
import { testRun } from '../support/harness/cluster.js';
import { eventIds } from '../support/harness/sender.js';
import {
  acknowledgedIds,
  deliverThroughKill,
  fleetDeliveries,
  haSettings,
  serve,
} from '../support/topologies/failover-run.js';
import { type SentinelTopology, startSentinelTopology } from '../support/topologies/redis.js';
import { until } from '../support/until.js';

/*
 * BullMQ behind Sentinel (a primary, two replicas, three sentinels) through node-redis createSentinel clients and
 * BullMQ's adapter, waitForReplicas { count: 1 }: two receivers hand 60 events and 20 copies to the queue, 8 at
 * a time, and two workers run them; the primary is SIGKILLed once 40% were acknowledged. Counted: events answered
 * 202 whose job no worker ever ran (must be 0), events run twice (reported), failed requests, seconds to recover.
 */
const { run, secret } = testRun();
const settings = haSettings();
let topology: SentinelTopology;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  topology = await startSentinelTopology();
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => {});
  await topology?.stop();
});

async function sentinelConnection() {
  // masterPoolSize 1 (the default): WAIT goes on the connection that added the job.
  const client = createSentinel({ name: topology.name, sentinelRootNodes: topology.sentinelRootNodes });
  client.on('error', () => {});
  await client.connect();
  closing.push(() => client.destroy());
  return createNodeRedisClient(client);
}

it(
  'a primary SIGKILLed at 40%: no job answered 202 is lost, every one runs',
  async () => {
    const runs = new Map<string, number>();
    const queues = await Promise.all(
      [1, 2].map(async () =>
        bullmqQueue({
          connection: await sentinelConnection(),
          prefix: `mw-ha:${run}`,
          backoffMs: 100,
          ...(settings.replicas > 0 ? { waitForReplicas: { count: settings.replicas, timeoutMs: 500 } } : {}),
        }),
      ),
    );
    const receivers = queues.map((queue) => {
      const receiver = createReceiver({ secrets: secret, queue });
      receiver.on('message.delivered', (event) => {
        runs.set(event.id as string, (runs.get(event.id as string) ?? 0) + 1);
      });
      receiver.onError(() => {});
      closing.push(() => queue.close());
      return receiver;
    });
    const workers: DurableWorker[] = [];
    for (const [index, receiver] of receivers.entries()) {
      // A job a worker took from the primary that died is locked there: it runs again once its lock ends. Long
      // enough that a busy machine's pause does not stall a running job (one stall more dead-letters it).
      const worker = await createBullmqWorker({
        receiver,
        queue: queues[index] as (typeof queues)[0],
        lockDurationMs: 10_000,
      });
      workers.push(worker);
      closing.push(() => worker.close({ timeoutMs: 2000 }));
    }
    const servers = await Promise.all(receivers.map((receiver) => serve(receiver)));
    closing.push(() => Promise.all(servers.map((server) => server.close())));
    const ids = eventIds(run, settings.events);
    const result = await deliverThroughKill(
      fleetDeliveries(
        ids,
        settings.copies,
        servers.map((server) => server.url),
      ),
      {
        secret,
        concurrency: settings.concurrency,
        killAt: 0.4,
        kill: () => topology.primary.kill(),
        deadlineMs: settings.deadlineMs,
      },
    );
    expect(acknowledgedIds(result.attempts)).toEqual(new Set(ids));
    const lost = () => ids.filter((id) => !runs.has(id));
    await until(() => lost().length === 0, {
      timeoutMs: 45_000,
      what: 'every acknowledged job to run',
    }).catch(() => {});
    const doubles = ids.filter((id) => (runs.get(id) ?? 0) > 1).length;
    console.info(
      `BullMQ on Sentinel, waitForReplicas ${settings.replicas}: lost ${lost().length}, run twice ${doubles}, ` +
        `failed requests ${result.failed}, recovered in ${result.recoverySeconds.toFixed(1)} s`,
      result.tally,
    );
    if (settings.safe) expect(lost(), 'jobs answered 202 that never ran').toEqual([]);
    expect(result.failed).toBeGreaterThan(0);

    // The dead-letter command finds the queue through the sentinels too, after the failover.
    const opened = await openDeadLetters('dead-letters count', {
      'redis-sentinels': topology.sentinelRootNodes.map((node) => `${node.host}:${node.port}`).join(','),
      'sentinel-name': topology.name,
      prefix: `mw-ha:${run}`,
    });
    try {
      expect(await opened.deadLetters.count()).toBe(0);
    } finally {
      await opened.close();
    }
    const sentinels = topology.sentinelRootNodes.map((node) => `${node.host}:${node.port}`).join(',');
    await expect(
      openDeadLetters('dead-letters count', {
        'redis-sentinels': sentinels,
        'sentinel-name': 'nope',
        deadline: '2000',
      }),
    ).rejects.toThrow();
    await expect(openDeadLetters('dead-letters count', { 'redis-sentinels': sentinels })).rejects.toThrow(
      /needs --sentinel-name/,
    );
  },
  settings.deadlineMs + 60_000,
);
