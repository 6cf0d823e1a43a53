import { createNodeRedisClient } from 'bullmq';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDeadLetters } from '../../src/cli/dead-letter-connect.js';
import { bullmqQueue } from '../../src/durable/bullmq/index.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { testRun } from '../support/harness/cluster.js';
import { haSettings, interleavedCost } from '../support/topologies/failover-run.js';
import { type SentinelTopology, startSentinelTopology } from '../support/topologies/redis.js';
import { bullmqFleetThroughKill } from './failover-bullmq-fleet.js';

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
    const result = await bullmqFleetThroughKill({
      run,
      secret,
      connection: sentinelConnection,
      prefix: `mw-ha:${run}`,
      kill: () => topology.primary.kill(),
      closing,
    });
    expect(result.allAcknowledged).toBe(true);
    console.info(
      `BullMQ on Sentinel, waitForReplicas ${settings.replicas}: lost ${result.lost.length}, run twice ${result.doubles}, ` +
        `failed requests ${result.failed}, recovered in ${result.recoverySeconds.toFixed(1)} s`,
      result.tally,
    );
    if (settings.safe) expect(result.lost, 'jobs answered 202 that never ran').toEqual([]);
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

// bench/failover.mjs: what waitForReplicas costs a handoff (202 once the job is added, and held by a replica).
it.runIf(process.env.MW_HA_COST)(
  'the cost of waitForReplicas',
  async () => {
    const handoff = async (waitForReplicas?: { count: number; timeoutMs: number }) => {
      const queue = bullmqQueue({
        connection: await sentinelConnection(),
        prefix: `mw-cost:${run}`,
        ...(waitForReplicas ? { waitForReplicas } : {}),
      });
      closing.push(() => queue.close());
      const receiver = createReceiver({ secrets: secret, queue });
      receiver.on('message.delivered', () => {});
      return (id: string) => {
        const { body, headers } = createSignedRequest(createEvent('message.delivered', { id }), { secret });
        return receiver.receive({ method: 'POST', headers, rawBody: body });
      };
    };
    await interleavedCost(
      [
        ['BullMQ without waitForReplicas', await handoff()],
        ['BullMQ waitForReplicas 1', await handoff({ count: 1, timeoutMs: 500 })],
      ],
      Number(process.env.MW_HA_COST),
      run,
      202,
    );
  },
  300_000,
);
