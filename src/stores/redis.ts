import { createHash } from 'node:crypto';
import { option, rules } from '../base/options.js';
import { type Deadline, operationTimeout, StoreTimeoutError, withinOperationTimeout } from './deadline.js';

import { wellFormedKey } from './lossless-key.js';
import { newOwnerToken } from './owner-token.js';
import { type RedisLink, type RedisStoreClient, redisLink, type Send } from './redis-client.js';
import { awaitReplicas, replicasOption, unconfirmed, type WaitForReplicas } from './replicas.js';
import type { ClaimResult, DedupeStore } from './types.js';

export type {
  IoRedisClient,
  NodeRedisClient,
  NodeRedisCluster,
  NodeRedisSentinel,
  NodeRedisSentinelLease,
  RedisStoreClient,
} from './redis-client.js';
export type { WaitForReplicas } from './replicas.js';

export interface RedisDedupeStoreOptions {
  /**
   * A connected client: node-redis createClient(), createSentinel() or createCluster(), or ioredis (Redis,
   * Sentinel, Cluster). Attach `client.on('error', …)` yourself, or a dropped connection crashes the process.
   */
  client: RedisStoreClient;
  /** Prepended to every key. Default `mw:`. */
  prefix?: string;
  /**
   * Longest wait for one operation (milliseconds, default 3000). Past it the operation rejects and the event
   * is answered 503 store_unavailable, so the service retries it: a paused or unreachable server never holds
   * a request.
   */
  operationTimeoutMs?: number;
  /**
   * Acknowledge an event (200) only once `count` replicas hold its completion (WAIT after it): a failover then
   * cannot forget that it was processed.
   */
  waitForReplicas?: WaitForReplicas;
}

/*
 * One key per event. A lease is "<lease end, server ms>:<token>"; a completion is "done" with the retention
 * as its TTL. The server's clock (TIME) decides expiry, so instances with skewed clocks agree. A lease key
 * lives for two leases: an expired lease nobody took over still belongs to its owner (as in the memory
 * store), so a handler that ran past its lease can still record its completion.
 * CLAIM replies 0 (claimed), -1 (duplicate) or the lease's milliseconds left (in flight): one integer.
 */
const CLAIM = `
local now = redis.call('TIME')
now = now[1] * 1000 + math.floor(now[2] / 1000)
local value = redis.call('GET', KEYS[1])
if value == 'done' then return -1 end
if value then
  local leaseEnd = tonumber(string.match(value, '^(%d+):'))
  if leaseEnd and leaseEnd > now then return leaseEnd - now end
end
local lease = tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.0f', now + lease) .. ':' .. ARGV[2], 'PX', lease * 2)
return 0`;

const OWNED = `
local value = redis.call('GET', KEYS[1])
if not value or string.match(value, '^%d+:(.*)$') ~= ARGV[1] then return 0 end`;

const COMPLETE = `${OWNED}
redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2])
return 1`;

/* Extends an owned lease from the server's clock; a completed key ("done") is never owned. */
const RENEW = `${OWNED}
local now = redis.call('TIME')
now = now[1] * 1000 + math.floor(now[2] / 1000)
local lease = tonumber(ARGV[2])
redis.call('SET', KEYS[1], string.format('%.0f', now + lease) .. ':' .. ARGV[1], 'PX', lease * 2)
return 1`;

const RELEASE = `${OWNED}
redis.call('DEL', KEYS[1])
return 1`;

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});
const scripts = {
  claim: script(CLAIM),
  complete: script(COMPLETE),
  release: script(RELEASE),
  renew: script(RENEW),
};

/**
 * Dedupe store shared by several instances through Redis. Each operation is one atomic Lua script and one
 * round trip (EVALSHA; the script text is sent once per server, after a NOSCRIPT answer).
 *
 * A disconnected client makes every operation throw at once instead of queueing, so the receiver answers
 * 503 store_unavailable and the service retries later: fail closed.
 */
export class RedisDedupeStore implements DedupeStore {
  readonly prefix: string;
  readonly operationTimeoutMs: number;
  readonly #link: RedisLink;
  readonly #replicas: Required<WaitForReplicas> | undefined;

  constructor(options: RedisDedupeStoreOptions) {
    const client = options?.client;
    this.prefix = option(
      'prefix',
      options?.prefix,
      'mw:',
      rules.string,
      'new RedisDedupeStore({ prefix }): ',
    );
    this.operationTimeoutMs = operationTimeout('RedisDedupeStore', options?.operationTimeoutMs);
    this.#link = redisLink(client, this.operationTimeoutMs, 'RedisDedupeStore');
    this.#replicas = replicasOption('new RedisDedupeStore', options.waitForReplicas);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    let reply: number;
    try {
      reply = await this.#eval(scripts.claim, key, String(Math.ceil(leaseMs)), token);
    } catch (error) {
      if (error instanceof StoreTimeoutError) this.#releaseLate(key, token);
      throw error;
    }
    if (reply === 0) return { status: 'claimed', token };
    if (reply < 0) return { status: 'duplicate' };
    return { status: 'in_flight', retryAfterMs: reply };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    const replicas = this.#replicas;
    const args = [token, String(Math.ceil(retentionMs))];
    if (!replicas) return (await this.#eval(scripts.complete, key, ...args)) === 1;
    // The completion and WAIT on one connection: WAIT counts the replicas that hold that connection's writes.
    return withinOperationTimeout(this.operationTimeoutMs, 'The Redis store', (deadline) =>
      this.#link.session(
        this.#key(key),
        async (send) => {
          const owned = (await this.#evalScript(send, scripts.complete, key, args, deadline)) === 1;
          await awaitReplicas(send, replicas, 'The completion of an event');
          return owned;
        },
        deadline,
      ),
    ).catch((error: unknown) => {
      throw unconfirmed(error, replicas);
    });
  }

  async release(key: string, token: string): Promise<boolean> {
    return (await this.#eval(scripts.release, key, token)) === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.#eval(scripts.renew, key, token, String(Math.ceil(leaseMs)))) === 1;
  }

  /**
   * A claim this side stopped waiting for may still run on the server (paused, or busy with a slow script),
   * and its lease would answer every retry 409 for a whole lease. Its release, sent on the same connection
   * after it, runs after it on the server and drops that lease by its token; it changes nothing when the
   * claim never ran. It has its own deadline, and nobody waits for it.
   */
  #releaseLate(key: string, token: string): void {
    this.release(key, token).catch(() => {});
  }

  /** The key in Redis: the prefix, then the key in a form UTF-8 keeps apart from every other. */
  #key(key: string): string {
    return this.prefix + wellFormedKey(key);
  }

  /** One operation, both round trips of a NOSCRIPT retry included, within operationTimeoutMs. */
  #eval(script: Script, key: string, ...args: string[]): Promise<number> {
    return withinOperationTimeout(this.operationTimeoutMs, 'The Redis store', (deadline) =>
      this.#link.session(this.#key(key), (send) => this.#evalScript(send, script, key, args, deadline)),
    );
  }

  async #evalScript(send: Send, script: Script, key: string, args: string[], deadline: Deadline) {
    const tail = ['1', this.#key(key), ...args];
    let reply: unknown;
    try {
      reply = await send(['EVALSHA', script.sha, ...tail]);
    } catch (error) {
      // A new or restarted server has no script cache yet. Past the deadline the operation was answered (a
      // claim's release already sent): sent now, it would run after that release.
      if (!String((error as Error)?.message).startsWith('NOSCRIPT') || deadline.remainingMs() === 0)
        throw error;
      reply = await send(['EVAL', script.source, ...tail]);
    }
    return Number(reply);
  }
}
