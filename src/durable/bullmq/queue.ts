import { type ConnectionOptions, type JobsOptions, Queue } from 'bullmq';
import { boundsItsOwnEnqueue, withDeadline } from '../../base/deadline.js';
import { WebhookConfigError } from '../../base/errors.js';
import { option, rules } from '../../base/options.js';
import type { WaitForReplicas } from '../../stores/replicas.js';
import { DEFAULT_RETENTION_MS } from '../../stores/retention.js';
import { COUNTS_INTERVAL_MS, countsPoller } from '../counts-poller.js';
import { retrySchedule } from '../job-run.js';
import type { DurableJob, DurableQueue, DurableQueueOptions, EnqueueResult } from '../port.js';
import { checkRedisDurability } from './redis-durability.js';
import { queueTopology } from './redis-topology.js';

export interface BullmqQueueOptions extends DurableQueueOptions {
  /** Where Redis is: any BullMQ connection (node-redis through createNodeRedisClient, ioredis); or pass `queue`. */
  connection?: ConnectionOptions;
  /** A BullMQ Queue you created (its connection and prefix are used); or pass `connection` (and `name`). */
  queue?: Queue;
  /**
   * BullMQ's key prefix in Redis. Default BullMQ's (`bull`); on a Redis Cluster (an ioredis Cluster) `{bull}`,
   * and a prefix of your own needs a hash tag (`{…}`) there, so that a queue's keys share one slot.
   */
  prefix?: string;
  /**
   * Answer 202 only once `count` replicas hold the job (Redis WAIT after the add), so a failover cannot lose
   * an acknowledged event; past `timeoutMs` the delivery is answered 503 (or 202 with `whenFewer: 'accept'`).
   */
  waitForReplicas?: WaitForReplicas;
  /**
   * Accept a Redis that can lose acknowledged jobs (no append-only file, or a maxmemory-policy other than
   * noeviction); without it the first use checks Redis and every delivery is answered 503 until it is fixed.
   * For tests and throwaway Redis only. Default false.
   */
  allowVolatileRedis?: boolean;
  /**
   * Read the event's job before adding it, so that a redelivery of a known event is answered as pg-boss's queue
   * answers it: 409 event_in_progress while its job waits or runs, 200 duplicate once it completed or sits in
   * the dead-letter. Without it, every delivery whose job BullMQ holds is answered 202, new or not: BullMQ keeps
   * one job per event either way, so nothing runs twice, and the service stops retrying at once. The read is a
   * second Redis command per delivery, which costs the receiving process CPU (BENCHMARKS.md). Default false.
   */
  tellDuplicates?: boolean;
}

/** A DurableQueue on BullMQ, with what createBullmqWorker needs to consume it. */
export interface BullmqDurableQueue extends DurableQueue {
  readonly engine: 'bullmq';
  readonly queue: Queue;
  /**
   * Checks once that Redis keeps what it acknowledges (appendonly yes, maxmemory-policy noeviction) unless
   * allowVolatileRedis; rejects with a WebhookConfigError naming the settings, or once `deadlineMs` (default
   * 10 s) passed. The first enqueue runs it; call it at start to fail before the first delivery.
   */
  ready(deadlineMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_QUEUE_NAME = 'messaging-webhooks';

/**
 * Durable acknowledgement on BullMQ: each event becomes one job whose jobId is its dedupe key, so every
 * further delivery finds it. Completed jobs are kept for `retentionMs` (the dedupe window); failed jobs,
 * BullMQ's dead-letter, are kept until you retry or remove them.
 *
 *   const queue = bullmqQueue({ connection: createNodeRedisClient(createClient({ url })), name: 'sms' });
 *   createReceiver({ secrets, queue });   // and in the worker processes: createBullmqWorker({ receiver, queue })
 */
export function bullmqQueue(options: BullmqQueueOptions): BullmqDurableQueue {
  if (!options?.queue && !options?.connection) {
    throw new WebhookConfigError(
      'bullmqQueue needs `connection` (where Redis is) or an existing BullMQ `queue`.',
    );
  }
  const jobOptions = jobOptionsOf(options);
  const allowVolatile = booleanOption(options, 'allowVolatileRedis');
  const tellDuplicates = booleanOption(options, 'tellDuplicates');
  const owned = !options.queue;
  const { prefix, replicated } = queueTopology(options);
  const queue =
    options.queue ??
    new Queue(options.name ?? DEFAULT_QUEUE_NAME, {
      connection: options.connection as ConnectionOptions,
      ...(prefix === undefined ? {} : { prefix }),
    });
  // Redis trouble: the connection reconnects; a failed enqueue is answered 503 and told to onError.
  if (owned) queue.on('error', () => {});
  const poller = countsPoller(() => readCounts(queue), options.countsIntervalMs ?? COUNTS_INTERVAL_MS);

  let checked: Promise<void> | undefined;
  // Once the check passed, an enqueue does not wait for it again: an event waits only for its own add.
  let passed = false;
  // Could the check not run (INFO refused), the first enqueue that can tell someone is told.
  let untold: string | undefined;
  const ready = () => {
    checked ??= (async () => {
      if (!allowVolatile) untold = await checkRedisDurability(await queue.getBackend().client);
      passed = true;
    })();
    checked.catch(() => {
      checked = undefined; // refused or unreachable: the next use checks again (Redis may be fixed by then)
    });
    return checked;
  };

  async function enqueue(job: DurableJob, warn?: (warning: string) => void): Promise<EnqueueResult> {
    if (!passed) await ready();
    if (untold !== undefined && warn) {
      warn(untold);
      untold = undefined;
    }
    const jobId = bullmqJobId(job.key);
    // BullMQ's add answers the same for a new job and one it already had, so telling them apart takes a read
    // first (one HGETALL: BullMQ's getJobState is a slower script). BullMQ sets finishedOn only
    // when a job completed or failed its last attempt. Two deliveries racing here both add, BullMQ keeps one
    // job, and both are rightly told enqueued.
    if (tellDuplicates) {
      const existing = await queue.getJob(jobId);
      if (existing) return existing.finishedOn ? 'duplicate' : 'in_progress';
    }
    await replicated(queue, () => queue.add(job.event.type, job, jobOptions(jobId)), warn);
    return 'enqueued';
  }

  return boundsItsOwnEnqueue({
    engine: 'bullmq',
    queue,
    ready: (deadlineMs = 10_000) => withDeadline(ready(), deadlineMs, 'Checking Redis persistence'),
    enqueue: (job, deadlineMs, warn) => withDeadline(enqueue(job, warn), deadlineMs, 'Adding the BullMQ job'),
    counts: poller.counts,
    async close() {
      poller.stop();
      if (owned) await queue.close();
    },
  });
}

/** The queue's jobs by state, in one call. */
async function readCounts(queue: Queue) {
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'failed');
  const count = (type: string) => counts[type] ?? 0;
  return {
    waiting: count('wait') + count('prioritized') + count('delayed'),
    running: count('active'),
    retrying: count('delayed'),
    deadLettered: count('failed'),
  };
}

/** Each job's options: the retry schedule, completed jobs kept for the dedupe window, failed ones kept. */
function jobOptionsOf(options: BullmqQueueOptions): (jobId: string) => JobsOptions {
  const { attempts, backoffMs } = retrySchedule(options);
  const backoff = { type: 'exponential', delay: backoffMs, jitter: 0.5 };
  const removeOnComplete = { age: Math.ceil((options.retentionMs ?? DEFAULT_RETENTION_MS) / 1000) };
  // A literal per job: spreading shared options into a new object with the jobId would copy them per event.
  return (jobId) => ({ attempts, backoff, removeOnComplete, removeOnFail: false, jobId });
}

function booleanOption(options: BullmqQueueOptions, name: 'allowVolatileRedis' | 'tellDuplicates'): boolean {
  return option(name, options[name] ?? undefined, false, rules.boolean);
}

/**
 * BullMQ refuses `:` in a custom jobId, and a lone surrogate (from a sender's event id) has no UTF-8, so Redis
 * would name the job's key apart from its id; escaping `%` first keeps the mapping one-to-one.
 */
export function bullmqJobId(key: string): string {
  const escaped = key.replaceAll('%', '%25').replaceAll(':', '%3A');
  return LONE_SURROGATE.test(escaped)
    ? escaped.replace(LONE_SURROGATES, (unit) => `%u${unit.charCodeAt(0).toString(16).toUpperCase()}`)
    : escaped;
}

const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
