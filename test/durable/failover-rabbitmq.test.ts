import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { createRabbitmqWorker, rabbitmqQueue } from '../../src/durable/rabbitmq/index.js';
import { rabbitmqInternals } from '../../src/durable/rabbitmq/queue.js';
import { createReceiver } from '../../src/index.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { ownRabbitmqCluster } from '../support/topologies/rabbitmq.js';
import { SECRET } from '../support/unit.js';
import { deliverThroughLoss, unconfirmedPublishes } from './broker-failover.js';

/*
 * A RabbitMQ node lost: a 3-node cluster, the job queue a quorum queue on all three, the node holding its
 * leader SIGKILLed while deliveries go on, right after a handoff's publish was sent (so at least that one is
 * unconfirmed at the kill). Every delivery is sent again until it is answered 2xx, as the service does; every
 * event answered 2xx must run.
 */
const { run } = testRun();
const table = `mw_jobs_failover_${run}`;
const EVENTS = 300;
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS "${table}"`);
  await client.end();
}, 60_000);

it.skipIf(process.env.CI_REPEAT_RUN === '1')(
  "RabbitMQ: the quorum queue leader's node SIGKILLed mid-run: 0 events answered 2xx that never run",
  async () => {
    const cluster = await ownRabbitmqCluster();
    closers.push(() => cluster.remove());
    const name = `mw-failover-${run}`;
    const queue = rabbitmqQueue({
      url: cluster.urls,
      name,
      ledger: { connectionString: DATABASE_URL, table },
      attempts: 3,
      backoffMs: 200,
    });
    closers.push(() => queue.close());
    const receiver = createReceiver({ secrets: SECRET, queue });
    receiver.onError(() => {});
    await queue.ready(20_000);
    const worker = await createRabbitmqWorker({ receiver, queue, concurrency: 8, handlerTimeoutMs: 2000 });
    closers.push(() => worker.close({ timeoutMs: 2000 }));
    // The leader and its node's processes are found before the deliveries start: the kill itself then waits
    // for nothing but the next publish.
    const killed = cluster.leaderOf(name);
    expect(killed, "the queue leader's node").toBeDefined();
    const kill = await cluster.killer(killed as string);
    const publishes = unconfirmedPublishes(rabbitmqInternals(queue, 'test').broker, 'publishText');
    let unconfirmedAtKill = 0;
    const { answers, acknowledged, notRun } = await deliverThroughLoss(receiver, EVENTS, async () => {
      unconfirmedAtKill = await publishes.killAtNextSend(kill);
      await cluster.kill(killed as string);
    });
    console.log(
      `RabbitMQ leader ${killed} killed with ${unconfirmedAtKill} publishes unconfirmed (${publishes.failedAfterKill} refused after it): ${JSON.stringify({ answers, acknowledged: acknowledged.size, notRun, reasons: publishes.reasons() })}`,
    );
    expect(unconfirmedAtKill, 'handoffs in flight at the kill').toBeGreaterThan(0);
    expect(notRun).toEqual([]);
    expect(acknowledged.size).toBe(EVENTS);
  },
  150_000,
);
