import type { ErrorContext, HandlerContext } from '../contract/context.js';
import type { DeadLetterCode, WebhookHandlerError } from '../contract/errors.js';
import type { DurableJob, DurableQueue } from '../contract/queue.js';
import type { Tracing } from '../contract/tracing.js';
import type { DedupeStore, StoreTx } from '../stores/types.js';

export type { DurableJob, DurableQueue, DurableQueueCounts, EnqueueResult } from '../contract/queue.js';

/**
 * What names a job engine and reads its own failures. Each engine's folder (`durable/bullmq/`,
 * `durable/pg-boss/`) has one, in its `engine.ts`, and hands it to the shared parts (the worker's runner, its
 * spans, the dead letters): nothing outside the folder knows an engine by name.
 */
export interface JobEngine {
  /** Its name, as `DeadLetters.engine` and the spans' `messaging.system` give it: `bullmq`, `pg-boss`. */
  readonly name: string;
  /** What it runs on, for messages that say what to check: `Redis`, `PostgreSQL`. */
  readonly store: string;
  /**
   * The dead-letter reason of a failure the engine reported in its own words (a stalled job, a lost lock), or
   * undefined when the message is none it knows (then: handler_failed). A run's own errors, which carry their
   * code, are read before it is asked.
   */
  failureReason(message: string): DeadLetterCode | undefined;
}

/** The part of a receiver a worker needs: its handlers (given `Tx` as ctx.tx) and its onError handlers. */
export interface DispatchingReceiver<Tx = unknown> {
  dispatch(event: DurableJob['event'], ctx: HandlerContext<Tx>): Promise<void>;
  reportError(error: WebhookHandlerError, ctx: ErrorContext): Promise<void>;
}

/** Retry schedule of a failed job: `attempts` runs in all, `delayMs` × 2^(n-1) between them, with jitter. */
export interface RetryOptions {
  /** Runs in all before the job goes to the dead-letter. Default 5. */
  attempts?: number;
  /** Delay before the first retry; each next one doubles it, with up to 50% jitter. Default 1000 ms. */
  backoffMs?: number;
}

/** Options both engines' queues take. */
export interface DurableQueueOptions extends RetryOptions {
  /** The queue's name; the receiver and its workers use the same. Default `messaging-webhooks` (pg-boss: `_`). */
  name?: string;
  /**
   * How long a completed job is kept: a delivery of its event within this time answers `duplicate`, one
   * after it runs the handlers again. Must outlast the service's retry schedule. Default 7 days.
   */
  retentionMs?: number;
  /** How often the counts in receiver.metrics() are read from the engine. Default 5000 ms. */
  countsIntervalMs?: number;
}

/**
 * Options both engines' workers take. `S` is the type of `store`: the receiver's handlers must take its
 * transaction as ctx.tx (`createReceiver({ queue, store })` types them so), else the worker does not compile.
 */
export interface DurableWorkerOptions<
  Q extends DurableQueue,
  // biome-ignore lint/suspicious/noExplicitAny: any store, whatever its transaction
  S extends DedupeStore<any> | undefined = undefined,
> {
  /**
   * The receiver whose handlers (receiver.on, onAny) run the jobs, and whose onError hears of dead-letters. With
   * a `store`, its handlers' ctx.tx is the store's transaction: create it with the same store,
   * `createReceiver({ secrets, queue, store })`.
   */
  receiver: DispatchingReceiver<StoreTx<S>>;
  /** The same queue the receivers enqueue into. */
  queue: Q;
  /** Jobs this worker runs at once. Default 16. */
  concurrency?: number;
  /**
   * How long a job's handlers may run (ms). Past it the attempt counts as failed (onError hears
   * handler_timeout if it was the last): the job is retried, and close() is never held by it. The handler
   * itself cannot be stopped; make it end. Default 60000.
   */
  handlerTimeoutMs?: number;
  /**
   * Exactly-once effects: the inbox the handlers run in, the receiver's own store
   * (`new PostgresDedupeStore({ pool, transactional: true })`). Each job's handlers run in a transaction
   * that also records the event done, and get its client as ctx.tx: a second run of the job (a worker the
   * engine thought dead, a lost lock) finds the event done and writes nothing.
   */
  store?: S;
  /** How long a run's claim in `store` lasts without renewal (ms). Default 60000. */
  leaseMs?: number;
  /** How long `store` remembers a done event (ms). Default 7 days; at least the queue's retentionMs. */
  inboxRetentionMs?: number;
  /**
   * A span per attempt of a job, in the trace of the delivery that enqueued it: openTelemetry() from
   * messaging-webhooks/opentelemetry. Default: no tracing.
   */
  tracing?: Tracing;
}

export interface WorkerCounters {
  /** Jobs this worker is running now. */
  running: number;
  /** Jobs whose handlers succeeded. */
  completed: number;
  /** Failed runs the engine will try again. */
  retried: number;
  /** Jobs that failed their last attempt and went to the dead-letter. */
  deadLettered: number;
  /**
   * How long this worker's runs (one attempt's handlers each) took, as a histogram. The workers of
   * messaging-webhooks/bullmq and /pg-boss always fill it; a job engine of your own may leave it out.
   */
  durations?: RunDurations;
}

/** A histogram of run times, in seconds: cumulative counts per bound, as Prometheus exposes them. */
export interface RunDurations {
  /** Upper bounds of the buckets, in seconds; the +Inf bucket is implied. */
  bucketBounds: readonly number[];
  /** Runs whose handlers succeeded. */
  completed: DurationCounts;
  /** Runs that failed (their handlers threw or passed handlerTimeoutMs): retried, or sent to the dead-letter. */
  failed: DurationCounts;
}

/** One result's runs in a RunDurations histogram. */
export interface DurationCounts {
  /** Runs counted. */
  count: number;
  /** Their times added up, in seconds. */
  sumSeconds: number;
  /** Cumulative counts per bound of bucketBounds, then the +Inf bucket (equal to count). */
  buckets: number[];
}

/** A running worker: stop it with close() (running jobs finish, unstarted ones stay queued). */
export interface DurableWorker {
  /**
   * Stops taking jobs and waits for the running ones (each at most handlerTimeoutMs). With `timeoutMs`,
   * the jobs still running after it fail their attempt (the engine retries them) and close() returns.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
  counters(): WorkerCounters;
}
