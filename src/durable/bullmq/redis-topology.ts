import type { ConnectionOptions, Queue } from 'bullmq';
import { WebhookConfigError } from '../../base/errors.js';
import { awaitReplicas, replicasOption, unconfirmed, type WaitForReplicas } from '../../stores/replicas.js';

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

/** Checks that WAIT can follow the adds on this connection: not through an ioredis Cluster (WAIT has no key). */
export function checkCanWait(owner: string, connection: unknown): void {
  if (!isClusterClient(connection)) return;
  throw new WebhookConfigError(
    `${owner}({ waitForReplicas }) cannot wait for replicas through an ioredis Cluster: WAIT has no key, so it ` +
      'reaches a random node, not the one that took the job. Use a Sentinel setup for waitForReplicas with BullMQ.',
  );
}

/**
 * WAIT on the connection BullMQ added the job on (the queue's one client): node-redis under BullMQ's adapter
 * (a Sentinel client: its master pool's connection; keep masterPoolSize at 1, its default), or ioredis.
 */
export function replicaWaiter(client: unknown, wait: Required<WaitForReplicas>): () => Promise<void> {
  const raw = rawClient(client);
  let send: (args: string[]) => Promise<unknown>;
  if (raw !== undefined && raw !== client && typeof raw.sendCommand === 'function') {
    const node = raw as { sendCommand: (...args: unknown[]) => Promise<unknown> };
    send = isNodeRedisSentinel(raw)
      ? (args) => node.sendCommand(false, args)
      : (args) => node.sendCommand(args);
  } else if (typeof (client as { call?: unknown })?.call === 'function') {
    const io = client as { call: (command: string, ...args: string[]) => Promise<unknown> };
    send = ([command, ...args]) => io.call(command as string, ...args);
  } else {
    throw new WebhookConfigError(
      "bullmqQueue({ waitForReplicas }) needs a node-redis or ioredis connection: this queue's BullMQ backend has no Redis command to send WAIT with.",
    );
  }
  return () => awaitReplicas(send, wait, 'The job of an event');
}

/**
 * What bullmqQueue needs of its Redis: the prefix (a cluster's hash tag), and `replicated`, run after each add:
 * with waitForReplicas, WAIT for the replicas; a write they do not hold fails the enqueue (503), unless
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
  if (replicas) checkCanWait('bullmqQueue', connection);
  let waitForReplicas: (() => Promise<void>) | undefined;
  const replicated = async (queue: Queue, warn?: (warning: string) => void) => {
    if (!replicas) return;
    try {
      waitForReplicas ??= replicaWaiter(await queue.getBackend().client, replicas);
      await waitForReplicas();
    } catch (error) {
      const behind = unconfirmed(error, replicas);
      if (!behind.accepted) throw behind;
      warn?.(behind.message);
    }
  };
  return { prefix, replicated };
}
