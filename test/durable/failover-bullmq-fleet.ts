import type { ConnectionOptions } from 'bullmq';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createReceiver } from '../../src/index.js';
import { eventIds } from '../support/harness/sender.js';
import {
  acknowledgedIds,
  deliverThroughKill,
  fleetDeliveries,
  haSettings,
  serve,
  type ThroughKill,
} from '../support/topologies/failover-run.js';
import { until } from '../support/until.js';

export interface BullmqThroughKill extends ThroughKill {
  /** Every event got a 2xx at last. */
  allAcknowledged: boolean;
  /** Events answered 202 whose job no worker ever ran. */
  lost: string[];
  /** Events whose job ran twice. */
  doubles: number;
}

/**
 * Two receivers hand events to BullMQ, each on a queue of its own `connection()`, and two workers run them; the
 * primary is lost (`kill`) once 40% of the deliveries were acknowledged. Counts the jobs answered 202 that never
 * ran, waiting up to 45 s for those a dead primary's worker held (they run again once their lock ends).
 */
export async function bullmqFleetThroughKill(options: {
  run: string;
  secret: string;
  connection: () => Promise<ConnectionOptions>;
  prefix: string;
  kill: () => Promise<void>;
  /** What to close once the test ends, in reverse order. */
  closing: (() => Promise<unknown>)[];
}): Promise<BullmqThroughKill> {
  const settings = haSettings();
  const runs = new Map<string, number>();
  const queues = await Promise.all(
    [1, 2].map(async () =>
      bullmqQueue({
        connection: await options.connection(),
        prefix: options.prefix,
        backoffMs: 100,
        ...(settings.replicas > 0 ? { waitForReplicas: { count: settings.replicas, timeoutMs: 500 } } : {}),
      }),
    ),
  );
  const receivers = queues.map((queue) => {
    const receiver = createReceiver({ secrets: options.secret, queue });
    receiver.on('message.delivered', (event) => {
      runs.set(event.id as string, (runs.get(event.id as string) ?? 0) + 1);
    });
    receiver.onError(() => {});
    options.closing.push(() => queue.close());
    return receiver;
  });
  for (const [index, receiver] of receivers.entries()) {
    // A job a worker took from the primary that died is locked there: it runs again once its lock ends. Long
    // enough that a busy machine's pause does not stall a running job (one stall more dead-letters it).
    const worker = await createBullmqWorker({
      receiver,
      queue: queues[index] as (typeof queues)[0],
      lockDurationMs: 10_000,
    });
    options.closing.push(() => worker.close({ timeoutMs: 2000 }));
  }
  const servers = await Promise.all(receivers.map((receiver) => serve(receiver)));
  options.closing.push(() => Promise.all(servers.map((server) => server.close())));
  const ids = eventIds(options.run, settings.events);
  const result = await deliverThroughKill(
    fleetDeliveries(
      ids,
      settings.copies,
      servers.map((server) => server.url),
    ),
    {
      secret: options.secret,
      concurrency: settings.concurrency,
      killAt: 0.4,
      kill: options.kill,
      deadlineMs: settings.deadlineMs,
    },
  );
  const acknowledged = acknowledgedIds(result.attempts);
  const lost = () => ids.filter((id) => acknowledged.has(id) && !runs.has(id));
  await until(() => lost().length === 0, {
    timeoutMs: 45_000,
    what: 'every acknowledged job to run',
  }).catch(() => {});
  return {
    ...result,
    allAcknowledged: acknowledged.size === ids.length,
    lost: lost(),
    doubles: ids.filter((id) => (runs.get(id) ?? 0) > 1).length,
  };
}
