import type { Queue } from 'bullmq';

/**
 * Deletes a job only while it is in the failed set, in one Lua script: BullMQ's own replay (Job.retry, its
 * reprocessJob script) takes the job out of the failed set the same way, so of a replay and a purge of one
 * dead letter exactly one finds it there, and the other is told it is gone. The keys deleted are those
 * BullMQ's removeJob deletes for a job with no parent, children or deduplication id, which the receiver's
 * jobs never have; the `removed` event is what BullMQ's removeJob emits.
 *
 * KEYS: failed set, job hash, events stream, queue meta. ARGV: job id. Returns 1 when deleted, 0 when the
 * job was not in the failed set.
 */
const PURGE_FAILED = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
local job = KEYS[2]
redis.call('DEL', job, job .. ':logs', job .. ':dependencies', job .. ':processed', job .. ':failed',
  job .. ':unsuccessful')
local maxEvents = redis.call('HGET', KEYS[4], 'opts.maxLenEvents') or 10000
redis.call('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'removed', 'jobId', ARGV[1], 'prev', 'failed')
return 1`;

const COMMAND = 'messagingWebhooksPurgeFailed';

/** What the script needs of BullMQ's Redis client (every BullMQ client has both). */
interface ScriptClient {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  runCommand(name: string, args: unknown[]): Promise<unknown>;
}

const defined = new WeakSet<object>();

/**
 * Deletes the failed job `jobId` of `queue`; false when it was not in the failed set (replayed, running,
 * gone). Undefined when the queue's backend has no Redis client to run the script on.
 */
export async function purgeFailed(queue: Queue, jobId: string): Promise<boolean | undefined> {
  const client = (await queue.getBackend().client) as unknown as Partial<ScriptClient> | undefined;
  if (typeof client?.defineCommand !== 'function' || typeof client.runCommand !== 'function')
    return undefined;
  if (!defined.has(client)) {
    client.defineCommand(COMMAND, { numberOfKeys: 4, lua: PURGE_FAILED });
    defined.add(client);
  }
  const keys = [queue.toKey('failed'), queue.toKey(jobId), queue.toKey('events'), queue.toKey('meta')];
  return Number(await client.runCommand(COMMAND, [...keys, jobId])) === 1;
}
