import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type IoRedisClusterRouting, masterNodeOf } from './cluster-slots.js';
import type { Deadline } from './deadline.js';

/** The part of a node-redis v5/v6 client (`createClient()` from `redis`) the store uses. */
export interface NodeRedisClient {
  readonly isReady: boolean;
  /** node-redis 5/6 take `{ timeout }` (ms): the command leaves the client's queue once it passes. */
  sendCommand(args: ReadonlyArray<string>, options?: { timeout?: number }): Promise<unknown>;
}

/** The part of a node-redis Sentinel client (`createSentinel()` from `redis`) the store uses. */
export interface NodeRedisSentinel {
  readonly isReady: boolean;
  getMasterNode(): unknown;
  sendCommand(
    isReadonly: boolean | undefined,
    args: string[],
    options?: { timeout?: number },
  ): Promise<unknown>;
  /** Runs `fn` on one connection of the master's pool, held for it alone. */
  use<T>(fn: (lease: NodeRedisSentinelLease) => Promise<T>): Promise<T>;
}

/** A connection leased from a node-redis Sentinel client. */
export interface NodeRedisSentinelLease {
  sendCommand(
    isReadonly: boolean | undefined,
    args: string[],
    options?: { timeout?: number },
  ): Promise<unknown>;
}

/** The part of a node-redis Cluster client (`createCluster()` from `redis`) the store uses. */
export interface NodeRedisCluster {
  readonly isReady: boolean;
  readonly masters: unknown;
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: { timeout?: number },
  ): Promise<unknown>;
}

/**
 * The part of an ioredis client the store uses: `new Redis(…)` (also with `sentinels`) or `new Cluster(…)`, which
 * routes each script by its key.
 */
export interface IoRedisClient {
  readonly status: string;
  /** True on an ioredis Cluster. */
  readonly isCluster?: boolean;
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** Any client the Redis store takes. */
export type RedisStoreClient = NodeRedisClient | NodeRedisSentinel | NodeRedisCluster | IoRedisClient;

/** Sends commands about one key on one connection, so that a WAIT after them counts their writes. */
export type Send = (args: string[]) => Promise<unknown>;

/** How the store talks to its client, whatever its kind. */
export interface RedisLink {
  /**
   * `work` with a sender of commands about `key`; `pinned`: all on one connection, held for them alone (a
   * WAIT counts the writes of its own connection) and given back once `pinned` says the deadline passed.
   */
  session<T>(key: string, work: (send: Send) => Promise<T>, pinned?: Deadline): Promise<T>;
  /** Every key is on one server (not a Cluster): the writes of many keys can share one pinned session. */
  readonly oneServer: boolean;
}

const NO_MASTER = () =>
  Promise.reject(
    new Error(
      'The ioredis Cluster knows no master for this key yet (its cluster map is loading, or a failover is under ' +
        'way): the event is answered 503 and retried.',
    ),
  );

const NOT_READY = () =>
  Promise.reject(
    new Error(
      'The Redis client is not connected (never connected, or reconnecting after the server went away). ' +
        'Call `await client.connect()` at startup; until it reconnects, events are answered 503 and retried.',
    ),
  );

/**
 * The link to a node-redis client, Sentinel or Cluster, or an ioredis client. node-redis queues commands while
 * offline, which would hold every request until the server is back: a client that is not ready fails at once,
 * and the `timeout` drops a command still waiting to be written (one already sent is bounded by the operation's
 * deadline alone, as every command of an ioredis client is).
 */
export function redisLink(client: unknown, timeout: number, store: string): RedisLink {
  if (typeof client !== 'object' || client === null) return refuse(client, store);
  const c = client as Record<string, unknown>;
  const options = { timeout };
  if (typeof c.sendCommand === 'function' && 'isReady' in c) {
    if ('masters' in c) {
      const cluster = client as NodeRedisCluster;
      // The key picks the slot's master; one client per node, so WAIT follows the writes on it.
      return {
        oneServer: false,
        session: (key, work) =>
          cluster.isReady ? work((args) => cluster.sendCommand(key, false, args, options)) : NOT_READY(),
      };
    }
    if (typeof c.getMasterNode === 'function' && typeof c.use === 'function') {
      const sentinel = client as NodeRedisSentinel;
      // A pinned session leases one connection of the master's pool for itself; others take any.
      const send: Send = (args) => sentinel.sendCommand(false, args, options);
      return {
        oneServer: true,
        session: (_key, work, pinned) => {
          if (!sentinel.isReady) return NOT_READY();
          if (!pinned) return work(send);
          // A command that never settles on a dead connection must not keep the lease: the pool would drain.
          return sentinel.use((lease) =>
            pinned.within(work((args) => lease.sendCommand(false, args, options))),
          );
        },
      };
    }
    const single = client as NodeRedisClient;
    return {
      oneServer: true,
      session: (_key, work) =>
        single.isReady ? work((args) => single.sendCommand(args, options)) : NOT_READY(),
    };
  }
  if ('status' in c && typeof c.call === 'function') {
    const io = client as IoRedisClient;
    const send: Send = ([command, ...rest]) => io.call(command as string, ...rest);
    if (io.isCluster !== true)
      return { oneServer: true, session: (_key, work) => (io.status === 'ready' ? work(send) : NOT_READY()) };
    // A pinned session goes to the connection the Cluster uses for the key's master, so that WAIT, which has no
    // key to be routed by, counts that connection's writes. A master gone since is refused there (MOVED).
    return {
      oneServer: false,
      session: (key, work, pinned) => {
        if (io.status !== 'ready') return NOT_READY();
        if (!pinned) return work(send);
        const node = masterNodeOf(client as IoRedisClusterRouting, key);
        if (node?.status !== 'ready') return NO_MASTER();
        return work(([command, ...rest]) => node.call(command as string, ...rest));
      },
    };
  }
  return refuse(client, store);
}

function refuse(client: unknown, store: string): never {
  throw new WebhookConfigError(
    `new ${store}({ client }) needs client: a node-redis client from createClient(), createSentinel() or ` +
      `createCluster() (redis@5 or 6), or an ioredis Redis or Cluster; got ${kindOf(client)}.`,
  );
}
