import { type ConnectionOptions, Job, Queue } from 'bullmq';
import { WebhookConfigError } from '../../base/errors.js';
import {
  candidateKeys,
  type DeadLetter,
  type DeadLetterEngine,
  type DeadLetters,
  deadLetterId,
  deadLetters,
  failureReason,
  type SkippedDeadLetter,
  skipped,
} from '../dead-letters.js';
import type { DurableJob } from '../port.js';
import { bullmqEngine } from './engine.js';
import { purgeFailed } from './purge-failed.js';
import { type BullmqDurableQueue, bullmqJobId, DEFAULT_QUEUE_NAME } from './queue.js';
import { clusterPrefix } from './redis-topology.js';

/** BullMQ's codes for a job that is gone (-1) or not in the failed set (-3) when Job.retry ran. */
const LEFT_FAILED_SET = new Set<unknown>([-1, -3]);

/** Where the dead letters are: the queue itself, or where to find it. */
export interface BullmqDeadLettersOptions {
  /** The queue the receiver and its workers use (bullmqQueue(…)); or pass `connection` (and `name`, `prefix`). */
  queue?: BullmqDurableQueue;
  /** Where Redis is: any BullMQ connection, as bullmqQueue takes it. */
  connection?: ConnectionOptions;
  /** The queue's name. Default `messaging-webhooks`, bullmqQueue's. */
  name?: string;
  /** BullMQ's key prefix in Redis. Default BullMQ's (`bull`). */
  prefix?: string;
  /** How long each call to Redis may take (ms). Default 10000. */
  deadlineMs?: number;
}

/**
 * The dead letters of a BullMQ queue (its failed set). A replay moves the failed job itself back to the
 * wait list with its attempts reset (BullMQ's Job.retry): the same job id, so no second copy can exist.
 *
 *   const dead = bullmqDeadLetters({ queue });   // the queue of the receiver and its workers
 *   for (const letter of await dead.list()) console.log(letter.id, letter.error.message);
 */
export function bullmqDeadLetters(options: BullmqDeadLettersOptions): DeadLetters {
  const { queue, owned } = deadLetterQueue(options);

  const failedJob = async (key: string) => {
    const job: Job<DurableJob> | undefined = await queue.getJob(bullmqJobId(key));
    return job && (await job.isFailed()) ? job : undefined;
  };

  /** Why the job of a key is not a dead letter (the first key that has a job tells). */
  async function absent(id: string): Promise<SkippedDeadLetter> {
    for (const key of candidateKeys(id)) {
      const job = await queue.getJob(bullmqJobId(key));
      if (!job) continue;
      const state = await job.getState();
      if (state === 'completed') return skipped.completed(id);
      if (state !== 'failed' && state !== 'unknown') return skipped.live(id);
    }
    return skipped.notFound(id);
  }

  const engine: DeadLetterEngine = {
    engine: bullmqEngine,
    async list(limit, offset, oldestFirst = false) {
      const jobs = (await queue.getJobs(
        'failed',
        offset,
        offset + limit - 1,
        oldestFirst,
      )) as Job<DurableJob>[];
      return jobs.flatMap((job) => (job ? [toDeadLetter(job)] : []));
    },
    count: () => queue.getFailedCount(),
    async find(id) {
      const jobs = await Promise.all(candidateKeys(id).map(failedJob));
      return jobs.flatMap((job) => (job ? [toDeadLetter(job)] : []));
    },
    absent,
    async replay(entry) {
      // The job by its id alone: the retry script reads what it needs in Redis, so the payload is not loaded
      // again (a job that is gone answers -1, below).
      const job = new Job<DurableJob>(queue, entry.event.type, {} as DurableJob, {}, entry.jobId);
      try {
        // Atomic in Redis: only a job still in the failed set moves, so a job that is waiting or running
        // (replayed by someone else a moment ago) is never queued a second time, and a purge that took it
        // out of the failed set first wins.
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        return undefined;
      } catch (error) {
        if (!LEFT_FAILED_SET.has((error as { code?: unknown })?.code)) throw error;
        return { ...(await absent(entry.key)), id: entry.id };
      }
    },
    async purge(entry) {
      // A backend without a Redis client to run the script on: read the state, then remove.
      const job = (await purgeFailed(queue, entry.jobId)) ?? (await failedJob(entry.key));
      if (!job) return { ...(await absent(entry.key)), id: entry.id };
      if (job !== true) await job.remove();
      return undefined;
    },
    async close() {
      if (owned) await queue.close();
    },
  };
  return deadLetters(engine, options.deadlineMs);
}

/** The queue the dead letters are in: the receiver's, or one opened here (and closed with the tools). */
function deadLetterQueue(options: BullmqDeadLettersOptions): { queue: Queue<DurableJob>; owned: boolean } {
  if (!options?.queue && !options?.connection) {
    throw new WebhookConfigError(
      'bullmqDeadLetters needs the `queue` your receiver uses (bullmqQueue(…)), or `connection` (where Redis is) and the queue `name`.',
    );
  }
  if (options.queue) return { queue: options.queue.queue as Queue<DurableJob>, owned: false };
  const prefix = clusterPrefix('bullmqDeadLetters', options.connection, options.prefix);
  const queue = new Queue<DurableJob>(options.name ?? DEFAULT_QUEUE_NAME, {
    connection: options.connection as ConnectionOptions,
    ...(prefix === undefined ? {} : { prefix }),
  });
  // Redis trouble is reported by the call that met it (its deadline); the connection reconnects.
  queue.on('error', () => {});
  return { queue, owned: true };
}

function toDeadLetter(job: Job<DurableJob>): DeadLetter {
  const data = job.data;
  const message = job.failedReason ?? '';
  return {
    id: deadLetterId(data),
    key: data.key,
    jobId: job.id as string,
    mode: data.ctx?.mode ?? data.key.split(':')[0] ?? 'live',
    event: data.event,
    error: { reason: failureReason(message, bullmqEngine), message },
    attempts: job.attemptsMade,
    enqueuedAt: new Date(job.timestamp),
    failedAt: new Date(job.finishedOn ?? job.timestamp),
  };
}
