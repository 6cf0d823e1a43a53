import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { option, rules } from '../../base/options.js';
import { WebhookHandlerError } from '../../contract/errors.js';
import type { DedupeStore } from '../../stores/types.js';
import { closeWorker, workerRunner } from '../job-run.js';
import { buryStalled, type DeliveryRun, jobOfMessage, LOOK_AGAIN_MS, runDelivery } from '../ledger/run.js';
import type { DurableWorker, DurableWorkerOptions } from '../port.js';
import { ACK_WAIT_MS, MAX_DELIVER } from './broker.js';
import { natsEngine } from './engine.js';
import { natsInternals } from './internals.js';
import type { NatsDurableQueue } from './queue.js';

// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export type NatsWorkerOptions<S extends DedupeStore<any> | undefined = undefined> = DurableWorkerOptions<
  NatsDurableQueue,
  S
>;

/** How long one pull waits for messages before the worker pulls again. */
const PULL_EXPIRES_MS = 1000;

/**
 * Runs the receiver's handlers on the jobs of a JetStream work-queue stream, pulling as many messages as it
 * has free slots (`concurrency`) from the stream's durable consumer. Each job runs under its claim in the
 * ledger, telling JetStream it is working while it runs; a failed attempt is negatively acknowledged with the
 * backoff as its delay, and after the last one the job is a dead letter in the ledger (onError told). A
 * message at its last delivery (MAX_DELIVER) that is still not settled becomes a dead letter (job_stalled).
 * close() lets running jobs finish and leaves the others in the stream.
 */
// biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
export async function createNatsWorker<S extends DedupeStore<any> | undefined = undefined>(
  options: NatsWorkerOptions<S>,
): Promise<DurableWorker> {
  const { receiver, queue } = options;
  const internal = natsInternals(queue, 'createNatsWorker');
  const { broker, ledger } = internal;
  const concurrency = option('concurrency', options.concurrency, 16, rules.whole({ min: 1 }));
  const runner = workerRunner(options, natsEngine, queue.name);
  const run: DeliveryRun = {
    ledger,
    runner,
    engine: natsEngine,
    schedule: internal.schedule,
    retentionMs: internal.retentionMs,
    orphanGraceMs: internal.orphanGraceMs,
  };
  await ledger.ready();
  const { js } = await broker.jetstream();
  const consumer = await js.consumers.get(broker.stream, broker.consumer);
  const tell = (cause: unknown) => {
    const error = new WebhookHandlerError(
      'queue_unavailable',
      'The NATS worker could not settle a job (NATS or the ledger unreachable); JetStream delivers it again.',
      { cause },
    );
    void receiver.reportError(error, { requestId: 'worker', reason: error.code });
  };

  const inFlight = new Set<Promise<void>>();
  let slotFreed: (() => void) | undefined;
  let stopping = false;
  let batch: ConsumerMessages | undefined;
  const start = (message: JsMsg) => {
    const work = settle(message, run, tell);
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      slotFreed?.();
    });
  };
  const pulling = (async () => {
    while (!stopping) {
      if (inFlight.size >= concurrency) {
        await new Promise<void>((resolve) => {
          slotFreed = resolve;
        });
        continue;
      }
      batch = await pull(consumer, concurrency - inFlight.size, tell);
      if (!batch) continue;
      try {
        for await (const message of batch) {
          // Pulled as the worker closed: back to the stream at once, for another worker.
          if (stopping) message.nak();
          else start(message);
        }
      } catch (error) {
        // The pull ended with an error (NATS lost, the consumer gone): told, and pulled again after a pause.
        if (!stopping) {
          tell(error);
          await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS));
        }
      }
    }
  })();

  async function stop(): Promise<void> {
    stopping = true;
    batch?.stop();
    slotFreed?.();
    await pulling;
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }
  return {
    close: (closeOptions) => closeWorker(stop, runner, closeOptions?.timeoutMs),
    counters: runner.counters,
  };
}

/** One pull of up to `count` messages; undefined (after a pause) when NATS could not be reached. */
async function pull(
  consumer: Consumer,
  count: number,
  tell: (cause: unknown) => void,
): Promise<ConsumerMessages | undefined> {
  try {
    return await consumer.fetch({ max_messages: count, expires: PULL_EXPIRES_MS });
  } catch (error) {
    tell(error);
    await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS));
    return undefined;
  }
}

/** One message: run it under the ledger, then ack it, or nak it with the delay after which it comes back. */
async function settle(message: JsMsg, run: DeliveryRun, tell: (cause: unknown) => void): Promise<void> {
  const job = jobOfMessage(message.data);
  if (!job) {
    message.term('not a job of the receiver');
    return;
  }
  // Tells JetStream the job is in hand, so that it does not deliver it again while the handlers run.
  const working = setInterval(() => message.working(), ACK_WAIT_MS / 3);
  try {
    if (message.info.deliveryCount >= MAX_DELIVER) {
      await buryStalled(run, job, message.info.deliveryCount);
      message.ack();
      return;
    }
    const heldMs = Date.now() - Number(message.info.timestampNanos) / 1e6;
    const settlement = await runDelivery(run, job, heldMs);
    if (settlement.again) message.nak(settlement.delayMs);
    else message.ack();
  } catch (error) {
    tell(error);
    message.nak(LOOK_AGAIN_MS);
  } finally {
    clearInterval(working);
  }
}
