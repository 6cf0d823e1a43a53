import type { DeliveryContext } from './context.js';
import type { TraceCarrier } from './tracing.js';

/** What a durable job carries: the verified, parsed event and the context its handlers get. */
export interface DurableJob {
  /** The dedupe key, the job's identity in the engine: `<mode>:<event id>` or `<mode>:sha256:<hex>`. */
  key: string;
  event: { type: string; id?: string; [field: string]: unknown };
  ctx: DeliveryContext;
  /** With tracing: the context of the handoff's span, the parent of each attempt's span in the workers. */
  trace?: TraceCarrier;
  /** With tracing, on engines that can rewrite a job's data (BullMQ): the spans of its failed attempts. */
  attemptTraces?: TraceCarrier[];
}

/** What the engine said about an event handed to it. */
export type EnqueueResult = 'enqueued' | 'in_progress' | 'duplicate';

/** Job counts of a durable queue, as last read from the engine. */
export interface DurableQueueCounts {
  /** Jobs waiting for a worker, retries waiting out their backoff included. */
  waiting: number;
  /** Jobs a worker is running now. */
  running: number;
  /** Jobs waiting out a backoff before their next attempt. */
  retrying: number;
  /** Jobs that failed every attempt and sit in the engine's dead-letter. */
  deadLettered: number;
  /** When the engine was read (ms since the epoch). */
  readAt: number;
}

/**
 * A job engine the receiver hands verified events to instead of running their handlers itself
 * (messaging-webhooks/bullmq, messaging-webhooks/pg-boss).
 */
export interface DurableQueue {
  /**
   * Hands the event to the engine under job.key; resolves once the engine holds the job durably: `enqueued`
   * (a new job), `in_progress` (its job is waiting or running), `duplicate` (its job completed, or failed
   * every attempt and sits in the dead-letter). Rejects when the engine fails or takes longer than
   * `deadlineMs` milliseconds. `warn` hears, once, of what does not stop the enqueue but the operator must
   * know (a durability check that could not run).
   */
  enqueue(job: DurableJob, deadlineMs: number, warn?: (warning: string) => void): Promise<EnqueueResult>;
  /**
   * The counts last read from the engine, for receiver.metrics() (which is synchronous). The first call
   * starts reading them every few seconds, on a timer that never keeps the process alive; `undefined`
   * until the first read finished.
   */
  counts?(): DurableQueueCounts | undefined;
  /** Stops reading counts; closes what the queue opened itself (never a connection or boss you gave it). */
  close?(): Promise<void>;
}
