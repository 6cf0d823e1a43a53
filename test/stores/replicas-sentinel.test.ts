import { createSentinel } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { RedisDedupeStore, type WaitForReplicas } from '../../src/stores/redis.js';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { testRun } from '../support/harness/cluster.js';
import { eventIds } from '../support/harness/sender.js';
import { countingReceiver } from '../support/topologies/failover-run.js';
import {
  cli,
  replicasOnline,
  type SentinelTopology,
  startSentinelTopology,
} from '../support/topologies/redis.js';
import { until } from '../support/until.js';

/*
 * waitForReplicas asking for more replicas than hold the completion, on a primary with two replicas behind
 * Sentinel: what the first attempt and every retry are answered, as a replica goes and comes back.
 */
const { run, secret } = testRun();
const prefix = `mw-replicas:${run}:`;
let topology: SentinelTopology;
const clients: { destroy(): Promise<unknown> }[] = [];

beforeAll(async () => {
  topology = await startSentinelTopology(2, 60_000);
  await replicasOnline(topology.primary, 2);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.destroy()));
  await topology?.stop();
});

async function receiverOn(waitForReplicas: WaitForReplicas) {
  const client = createSentinel({ name: topology.name, sentinelRootNodes: topology.sentinelRootNodes });
  client.on('error', () => {});
  clients.push(client);
  await client.connect();
  return countingReceiver(new RedisDedupeStore({ client, prefix, waitForReplicas }), secret);
}

const reason = (outcome: { body: string }) => JSON.parse(outcome.body).error?.code as string | undefined;

it('more replicas than are connected: refused before any handler runs, 503 store_unavailable naming both counts', async () => {
  const strict = await receiverOn({ count: 3, timeoutMs: 100 });
  const [id] = eventIds(run, 1) as [string];
  for (let attempt = 0; attempt < 2; attempt++) {
    const refused = await strict.deliver(id);
    expect([refused.status, reason(refused)]).toEqual([503, 'store_unavailable']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  }
  expect(strict.runs.get(id)).toBeUndefined();
  expect(strict.errors[0]).toMatch(/has 2 connected replicas and waitForReplicas asks for 3/);
  // whenFewer accept: acknowledged all the same, and onError is told.
  const lenient = await receiverOn({ count: 3, timeoutMs: 100, whenFewer: 'accept' });
  expect((await lenient.deliver(id)).status).toBe(200);
  expect(lenient.runs.get(id)).toBe(1);
  expect(lenient.errors.join(' ')).toMatch(/acknowledged all the same/);
});

it('a replica lost after the check: processed, answered not_replicated until the replicas hold it, then duplicate', async () => {
  const { deliver, runs, errors } = await receiverOn({ count: 2, timeoutMs: 1000 });
  const [warm, id, fresh] = eventIds(run, 3, 100) as [string, string, string];
  // Both replicas hold a first completion before one is taken away (a link may still be syncing).
  await replicasOnline(topology.primary, 2);
  await until(async () => (await deliver(warm)).status === 200, { what: 'a first event to be replicated' });
  const replica = topology.replicas[1];
  await replica?.kill();
  await until(
    async () => /connected_slaves:1/.test(await cli(topology.primary.port, 'INFO', 'replication')),
    {
      what: 'the primary to see one replica',
    },
  );
  const first = await deliver(id);
  expect([first.status, reason(first)]).toEqual([503, 'not_replicated']);
  expect(JSON.parse(first.body).error.message).toMatch(/was processed/);
  expect(runs.get(id)).toBe(1);
  expect(errors.join(' ')).toMatch(/only 1 of the 2 replicas/);
  // Every retry says the same while the replica is away; a new event is not run at all.
  for (let retry = 0; retry < 2; retry++) {
    const again = await deliver(id);
    expect([again.status, reason(again)]).toEqual([503, 'not_replicated']);
  }
  const refused = await deliver(fresh);
  expect([refused.status, reason(refused)]).toEqual([503, 'store_unavailable']);
  expect(runs.get(fresh)).toBeUndefined();
  // Back, and in sync: the retry is a duplicate (never a second run), the new event runs.
  await replica?.start();
  await replicasOnline(topology.primary, 2);
  await until(async () => (await deliver(id)).status === 200, { what: 'the retry to be answered 200' });
  expect(runs.get(id)).toBe(1);
  await until(async () => (await deliver(fresh)).status === 200, { what: 'the new event to be processed' });
  expect(runs.get(fresh)).toBe(1);
}, 60_000);

it('a primary paused after the claim: the request is answered 503 within the one store deadline, never run twice', async () => {
  const client = createSentinel({ name: topology.name, sentinelRootNodes: topology.sentinelRootNodes });
  client.on('error', () => {});
  clients.push(client);
  await client.connect();
  const deadlineMs = 1500;
  const store = new RedisDedupeStore({
    client,
    prefix,
    operationTimeoutMs: deadlineMs,
    waitForReplicas: { count: 1, timeoutMs: 1000 },
  });
  const receiver = createReceiver({ secrets: secret, store, leaseMs: 3000 });
  const [warm, id] = eventIds(run, 2, 200) as [string, string];
  const runs: string[] = [];
  let handlerEnded = 0;
  receiver.on('message.delivered', (event) => {
    runs.push(event.id as string);
    // The host of the primary freezes between the claim and the completion.
    if (event.id === id && runs.length === 1) topology.primary.pause();
    handlerEnded = performance.now();
  });
  const deliver = (eventId: string) => {
    const { body, headers } = createSignedRequest(createEvent('message.delivered', { id: eventId }), {
      secret,
    });
    return receiver.receive({ method: 'POST', headers, rawBody: body });
  };
  try {
    expect((await deliver(warm)).status).toBe(200);
    runs.length = 0;
    const started = performance.now();
    const answer = await deliver(id);
    const answered = performance.now();
    expect(answer.status).toBe(503);
    // Its completion and its release share the deadline the claim began: a frozen primary holds the request
    // that long in all, not once per call.
    expect(answered - started).toBeLessThan(deadlineMs + 700);
    expect(answered - handlerEnded).toBeLessThan(deadlineMs + 200);
  } finally {
    topology.primary.resume();
  }
  // Back: the completion sent before the deadline lands, and the retry is acknowledged without a second run.
  await until(async () => (await deliver(id)).status === 200, { what: 'the retry to be answered 200' });
  expect(runs).toEqual([id]);
}, 60_000);
