import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { option, rules } from '../../base/options.js';
import { WebhookHandlerError } from '../../contract/errors.js';
import type { DedupeStore } from '../../stores/types.js';
import { closeWorker, workerRunner } from '../job-run.js';
import { buryStalled, type DeliveryRun, jobOfMessage, LOOK_AGAIN_MS, runDelivery } from '../ledger/run.js';
import type { DurableWorker, DurableWorkerOptions } from '../port.js';
import { rabbitmqEngine } from './engine.js';
import { type RabbitmqDurableQueue, type RabbitmqInternals, rabbitmqInternals } from './queue.js';

// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export type RabbitmqWorkerOptions<S extends DedupeStore<any> | undefined = undefined> = DurableWorkerOptions<
  RabbitmqDurableQueue,
  S
>;

/**
 * Runs the receiver's handlers on the jobs of a RabbitMQ queue, `concurrency` at a time (the channel's
 * prefetch). Each job runs under its claim in the ledger; a failed attempt is published again to a wait
 * queue whose messages expire back into the job queue after the backoff, and the message is acked only once
 * RabbitMQ confirmed that copy. After the last attempt the job is a dead letter in the ledger and onError is
 * told. A job RabbitMQ delivered DELIVERY_LIMIT times without an answer (its workers died on it) arrives in
 * `<name>.dead` and becomes a dead letter too (job_stalled). close() lets running jobs finish and leaves
 * the others queued.
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export async function createRabbitmqWorker<S extends DedupeStore<any> | undefined = undefined>(
  options: RabbitmqWorkerOptions<S>,
): Promise<DurableWorker> {
  const { receiver, queue } = options;
  const internal = rabbitmqInternals(queue, 'createRabbitmqWorker');
  const { broker, ledger } = internal;
  const concurrency = option('concurrency', options.concurrency, 16, rules.whole({ min: 1 }));
  const runner = workerRunner(options, rabbitmqEngine, queue.name);
  const run: DeliveryRun = {
    ledger,
    runner,
    engine: rabbitmqEngine,
    schedule: internal.schedule,
    retentionMs: internal.retentionMs,
    orphanGraceMs: internal.orphanGraceMs,
  };
  await ledger.ready();
  const inFlight = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const tell = (cause: unknown) => {
    const error = new WebhookHandlerError(
      'queue_unavailable',
      'The RabbitMQ worker could not settle a job (RabbitMQ or the ledger unreachable); it comes back.',
      { cause },
    );
    void receiver.reportError(error, { requestId: 'worker', reason: error.code });
  };
  let closing = false;
  let current: { channel: ConfirmChannel; consumers: string[] } | undefined;

  /** A channel with both consumers on it; opened again (on the next node that answers) when it closes. */
  async function subscribe(): Promise<void> {
    const channel = await broker.channel();
    await channel.prefetch(concurrency);
    channel.on('close', () => {
      if (current?.channel === channel) current = undefined;
      if (!closing) resubscribe();
    });
    // RabbitMQ cancelled a consumer (its queue deleted or moved): the channel goes, and a new one subscribes.
    const cancelled = () => void channel.close().catch(() => {});
    const consumers = [
      (
        await channel.consume(queue.name, (message) =>
          message ? track(settle(channel, message, run, internal, tell)) : cancelled(),
        )
      ).consumerTag,
      (
        await channel.consume(broker.names.dead, (message) =>
          message ? track(buryDead(channel, message, run, tell)) : cancelled(),
        )
      ).consumerTag,
    ];
    current = { channel, consumers };
  }
  const resubscribe = () => {
    setTimeout(() => {
      if (closing) return;
      subscribe().catch((error) => {
        tell(error);
        resubscribe();
      });
    }, LOOK_AGAIN_MS);
  };
  await subscribe();

  async function stop(): Promise<void> {
    closing = true;
    const subscribed = current;
    for (const tag of subscribed?.consumers ?? []) await subscribed?.channel.cancel(tag).catch(() => {});
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    await subscribed?.channel.close().catch(() => {});
  }
  return {
    close: (closeOptions) => closeWorker(stop, runner, closeOptions?.timeoutMs),
    counters: runner.counters,
  };
}

/** A job RabbitMQ dead-lettered after too many deliveries: a dead letter in the ledger (job_stalled). */
async function buryDead(
  channel: ConfirmChannel,
  message: ConsumeMessage,
  run: DeliveryRun,
  tell: (cause: unknown) => void,
): Promise<void> {
  const job = jobOfMessage(message.content);
  try {
    if (job) await buryStalled(run, job, Number(message.properties.headers?.['x-delivery-count'] ?? 0));
    channel.ack(message);
  } catch (error) {
    tell(error);
    setTimeout(() => nackQuietly(channel, message), LOOK_AGAIN_MS);
  }
}

/** One message: run it under the ledger, then ack it (after publishing its delayed copy, when it comes back). */
async function settle(
  channel: ConfirmChannel,
  message: ConsumeMessage,
  run: DeliveryRun,
  queue: RabbitmqInternals,
  tell: (cause: unknown) => void,
): Promise<void> {
  const job = jobOfMessage(message.content);
  if (!job) {
    // None of the receiver's: to the dead-letter queue, where nobody runs it.
    channel.nack(message, false, false);
    return;
  }
  try {
    // Published before the receiver stamped its messages: old enough that a missing row means none comes.
    const since = message.properties.timestamp as number | undefined;
    const heldMs = since === undefined ? Number.POSITIVE_INFINITY : Date.now() - since * 1000;
    const settlement = await runDelivery(run, job, heldMs);
    if (settlement.again) await queue.broker.publishLater(job, settlement.delayMs, channel, since);
    channel.ack(message);
  } catch (error) {
    // The ledger or RabbitMQ failed us: the message goes back after a pause (or on its own, with the channel).
    tell(error);
    setTimeout(() => nackQuietly(channel, message), LOOK_AGAIN_MS);
  }
}

function nackQuietly(channel: ConfirmChannel, message: ConsumeMessage): void {
  try {
    channel.nack(message, false, true);
  } catch {
    // The channel closed: RabbitMQ requeued the message already.
  }
}
