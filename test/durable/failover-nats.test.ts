import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { createNatsWorker, natsQueue } from '../../src/durable/nats/index.js';
import { natsInternals } from '../../src/durable/nats/internals.js';
import { createReceiver } from '../../src/index.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { ownNatsCluster } from '../support/topologies/nats.js';
import { SECRET } from '../support/unit.js';
import { until } from '../support/until.js';
import { deliverThroughLoss, unconfirmedPublishes } from './broker-failover.js';

/*
 * A JetStream node lost: a 3-node cluster, the queue's stream replicated on all three (R3), its leader
 * SIGKILLed while deliveries go on, inside the call that sends a handoff's publish (so at least that one is
 * unacknowledged at the kill). Every delivery is sent again until it is answered 2xx, as the service does;
 * every event answered 2xx must run.
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
});

it.skipIf(process.env.CI_REPEAT_RUN === '1')(
  'NATS: the stream leader SIGKILLed mid-run: 0 events answered 2xx that never run',
  async () => {
    const cluster = await ownNatsCluster();
    closers.push(() => cluster.remove());
    const queue = natsQueue({
      servers: cluster.urls,
      name: `mw-failover-${run}`,
      replicas: 3,
      ledger: { connectionString: DATABASE_URL, table },
      attempts: 3,
      backoffMs: 200,
    });
    closers.push(() => queue.close());
    const receiver = createReceiver({ secrets: SECRET, queue });
    receiver.onError(() => {});
    // The cluster elects its meta leader before the stream can be created.
    await until(
      async () => {
        try {
          await queue.ready(5000);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 30_000, what: 'the stream created on the cluster' },
    );
    const worker = await createNatsWorker({ receiver, queue, concurrency: 8, handlerTimeoutMs: 2000 });
    closers.push(() => worker.close({ timeoutMs: 2000 }));

    const nc = await connect({ servers: cluster.urls });
    closers.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    // The leader is found before the deliveries start: the kill itself then waits for nothing but the next
    // publish.
    const killed = (await jsm.streams.info(`mw-failover-${run}`)).cluster?.leader;
    const leader = cluster.nodes.find((node) => node.name === killed);
    expect(leader, 'the stream leader').toBeDefined();
    const publishes = unconfirmedPublishes(natsInternals(queue, 'test').broker, 'publish');
    let unconfirmedAtKill = 0;
    const { answers, acknowledged, notRun } = await deliverThroughLoss(receiver, EVENTS, async () => {
      let exited: Promise<void> | undefined;
      unconfirmedAtKill = await publishes.killAtNextSend(() => {
        exited = leader?.kill(); // the signal goes now; the promise is its exit
      });
      await exited;
    });
    console.log(
      `NATS leader ${killed} killed with ${unconfirmedAtKill} publishes unacknowledged (${publishes.failedAfterKill} failed after it): ${JSON.stringify({ answers, acknowledged: acknowledged.size, notRun, reasons: publishes.reasons() })}`,
    );
    expect(unconfirmedAtKill, 'handoffs in flight at the kill').toBeGreaterThan(0);
    expect(notRun).toEqual([]);
    expect(acknowledged.size).toBe(EVENTS);
  },
  90_000,
);
