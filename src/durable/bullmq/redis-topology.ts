import type { ConnectionOptions, Queue } from 'bullmq';
import { WebhookConfigError } from '../../base/errors.js';
import { type IoRedisClusterRouting, masterNodeOf } from '../../stores/cluster-slots.js';
import {
  awaitReplicas,
  replicasOption,
  sharedReplicaWait,
  unconfirmed,
  type WaitForReplicas,
} from '../../stores/replicas.js';

/** The node-redis client under BullMQ's adapter (createNodeRedisClient keeps it as `raw`), or the connection. */
function rawClient(connection: unknown): Record<string, unknown> | undefined {
  if (typeof connection !== 'object' || connection === null) return undefined;
  const raw = (connection as { raw?: unknown }).raw;
  return (typeof raw === 'object' && raw !== null ? raw : connection) as Record<string, unknown>;
}

const isNodeRedisCluster = (client: Record<string, unknown> | undefined) =>
  client !== undefined && typeof client.sendCommand === 'function' && 'masters' in client;
const isNodeRedisSentinel = (client: Record<string, unknown> | undefined) =>
  client !== undefined && typeof client.getMasterNode === 'function';
/** An ioredis Cluster, or BullMQ's adapter of one. */
const isClusterClient = (connection: unknown) =>
  typeof connection === 'object' &&
  connection !== null &&
  (connection as { isCluster?: unknown }).isCluster === true;

/** A prefix with a hash tag: BullMQ's keys of one queue all hash to one slot, as its scripts need. */
const HASH_TAG = /\{[^}]+\}/;

/**
 * The BullMQ prefix a connection needs, or a refusal that names what to pass. BullMQ's node-redis adapter has
 * no cluster support (its worker never becomes ready): a node-redis createCluster() client is refused. On an
 * ioredis Cluster every key of a queue must hash to one slot: the default prefix becomes `{bull}`, and a prefix
 * without a hash tag is refused (its scripts would fail with CROSSSLOT).
 */
export function clusterPrefix(
  owner: string,
  connection: unknown,
  prefix: string | undefined,
): string | undefined {
  if (isNodeRedisCluster(rawClient(connection))) {
    throw new WebhookConfigError(
      `${owner} cannot run on a node-redis createCluster() client: BullMQ's node-redis adapter has no cluster ` +
        "support (its workers never become ready). Pass an ioredis Cluster (new Cluster([{ host, port }]) from 'ioredis') " +
        "as connection, with a prefix in braces such as '{bull}'; or use a node-redis createSentinel() client on a Sentinel setup.",
    );
  }
  if (!isClusterClient(connection)) return prefix;
  if (prefix === undefined) return '{bull}';
  if (HASH_TAG.test(prefix)) return prefix;
  throw new WebhookConfigError(
    `${owner}({ prefix: '${prefix}' }) on a Redis Cluster: every key of a BullMQ queue must be in one slot, or ` +
      `each enqueue fails with CROSSSLOT. Give the prefix a hash tag: prefix: '{${prefix}}' (the receiver, its ` +
      'workers and the dead-letter tools must all use the same).',
  );
}

/** Waits for the replicas of one add: `before` it, the connection it will go on; the returned check, after it. */
type ReplicaWaiter = () => () => Promise<void>;

/**
 * WAIT on the connection BullMQ adds the job on (the queue's one client): node-redis under BullMQ's adapter
 * (a Sentinel client: its master pool's connection; keep masterPoolSize at 1, its default), or ioredis. On an
 * ioredis Cluster, the connection of the master serving the queue's slot: taken before the add, and WAIT sent
 * there only if that node still serves the slot after it (else the add may have gone to another one). BullMQ's
 * add of a job it already has writes a `duplicated` event, so the WAIT after it also covers a job that another
 * connection added.
 */
export function replicaWaiter(client: unknown, wait: Required<WaitForReplicas>, key: string): ReplicaWaiter {
  const raw = rawClient(client);
  const what = 'The job of an event';
  if (raw !== undefined && raw !== client && typeof raw.sendCommand === 'function') {
    const node = raw as { sendCommand: (...args: unknown[]) => Promise<unknown> };
    const send: (args: string[]) => Promise<unknown> = isNodeRedisSentinel(raw)
      ? (args) => node.sendCommand(false, args)
      : (args) => node.sendCommand(args);
    const shared = sharedReplicaWait(send, wait, what);
    return () => shared;
  }
  if (typeof (client as { call?: unknown })?.call !== 'function') {
    throw new WebhookConfigError(
      "bullmqQueue({ waitForReplicas }) needs a node-redis or ioredis connection: this queue's BullMQ backend has no Redis command to send WAIT with.",
    );
  }
  if (isClusterClient(client)) {
    const cluster = client as IoRedisClusterRouting;
    return () => {
      const before = masterNodeOf(cluster, key);
      return async () => {
        if (before === undefined || masterNodeOf(cluster, key) !== before)
          throw new Error(
            "The Redis Cluster's master for the queue's slot changed during the add (a failover): its replicas cannot be counted.",
          );
        await awaitReplicas(([command, ...args]) => before.call(command as string, ...args), wait, what);
      };
    };
  }
  const io = client as { call: (command: string, ...args: string[]) => Promise<unknown> };
  const shared = sharedReplicaWait(([command, ...args]) => io.call(command as string, ...args), wait, what);
  return () => shared;
}

/**
 * What bullmqQueue needs of its Redis: the prefix (a cluster's hash tag), and `replicated`, which runs each add
 * and, with waitForReplicas, WAITs for the replicas; a write they do not hold fails the enqueue (503), unless
 * `whenFewer: 'accept'`, which tells `warn` (onError) and lets it through.
 */
export function queueTopology(options: {
  connection?: ConnectionOptions;
  queue?: Queue;
  prefix?: string;
  waitForReplicas?: WaitForReplicas;
}) {
  const connection = options.queue?.opts.connection ?? options.connection;
  const prefix = clusterPrefix('bullmqQueue', connection, options.queue?.opts.prefix ?? options.prefix);
  const replicas = replicasOption('bullmqQueue', options.waitForReplicas);
  let waiter: ReplicaWaiter | undefined;
  const replicated = async (queue: Queue, add: () => Promise<unknown>, warn?: (warning: string) => void) => {
    if (!replicas) {
      await add();
      return;
    }
    waiter ??= replicaWaiter(await queue.getBackend().client, replicas, queue.qualifiedName);
    const confirm = waiter();
    await add();
    try {
      await confirm();
    } catch (error) {
      const behind = unconfirmed(error, replicas);
      if (!behind.accepted) throw behind;
      warn?.(behind.message);
    }
  };
  return { prefix, replicated };
}
