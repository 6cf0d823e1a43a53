import { createHash } from 'node:crypto';
import { option, rules } from '../base/options.js';
import {
  type Deadline,
  operationTimeout,
  StoreTimeoutError,
  storeTimeout,
  withinOperationTimeout,
} from './deadline.js';

import { wellFormedKey } from './lossless-key.js';
import { newOwnerToken } from './owner-token.js';
import { type RedisLink, type RedisStoreClient, redisLink, type Send } from './redis-client.js';
import { RedisReplicas } from './redis-replicas.js';
import { replicasOption, unconfirmed, type WaitForReplicas } from './replicas.js';
import type { ClaimResult, DedupeStore } from './types.js';
import { StoreUnavailableError } from './unavailable.js';

const STORE = 'The Redis store';

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
 * CLAIM replies 0 (claimed), -1 (duplicate) or the lease's milliseconds left (in flight): one integer; with
 * ARGV[3] '1' (too few replicas connected, waitForReplicas) it takes no new claim and replies -2.
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
if ARGV[3] == '1' then return -2 end
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

/*
 * Writes a completion again as it is (its TTL kept): a write after it on this connection, so that a WAIT then
 * counts the replicas that hold the completion, whichever connection wrote it first.
 */
const RECONFIRM = `
if redis.call('GET', KEYS[1]) ~= 'done' then return 0 end
redis.call('SET', KEYS[1], 'done', 'KEEPTTL')
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
  reconfirm: script(RECONFIRM),
};

/** Claims whose store time is counted at most (a claim never settled, after a crash of its handlers' run). */
const MAX_COUNTED = 10_000;

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
  readonly #waitFor: Required<WaitForReplicas> | undefined;
  readonly #replicas: RedisReplicas | undefined;
  /** Store time each open claim has used (claim, completion), by its token. */
  readonly #counted = new Map<string, number>();

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
    this.#waitFor = replicasOption('new RedisDedupeStore', options.waitForReplicas);
    this.#replicas = this.#waitFor && new RedisReplicas(this.#link, this.#waitFor, this.operationTimeoutMs);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    const started = performance.now();
    let sent = false;
    try {
      const result = await withinOperationTimeout(this.operationTimeoutMs, STORE, async (deadline) => {
        const refusal = this.#replicas ? await this.#replicas.missing(this.#key(key)) : undefined;
        // Past the deadline nobody waits for this claim: it is not sent, so it cannot land unowned.
        if (deadline.remainingMs() === 0) throw storeTimeout(STORE, this.operationTimeoutMs);
        sent = true;
        const args = [String(Math.ceil(leaseMs)), token, refusal ? '1' : '0'];
        const reply = await this.#eval(scripts.claim, key, args, deadline.remainingMs());
        return this.#claimResult(key, token, reply, refusal);
      });
      if (result.status === 'claimed') this.#count(token, performance.now() - started);
      return result;
    } catch (error) {
      if (sent && error instanceof StoreTimeoutError) this.#releaseLate(key, token);
      throw error;
    }
  }

  async #claimResult(key: string, token: string, reply: number, refusal?: string): Promise<ClaimResult> {
    if (reply === 0) return { status: 'claimed', token };
    if (reply === -2) throw new StoreUnavailableError(refusal);
    if (reply > 0) return { status: 'in_flight', retryAfterMs: reply };
    // A duplicate is acknowledged as its first completion would have been: once the replicas hold it.
    if (this.#replicas) await this.#confirm(key, scripts.reconfirm, []);
    return { status: 'duplicate' };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    const started = performance.now();
    const args = [token, String(Math.ceil(retentionMs))];
    const left = this.#left(token);
    try {
      const reply = this.#replicas
        ? await this.#confirm(key, scripts.complete, args, Math.max(1, left))
        : await this.#eval(scripts.complete, key, args, Math.max(1, left));
      this.#counted.delete(token);
      return reply === 1;
    } catch (error) {
      // A release may follow: it gets what is left, and nothing once this call ran out of the time it was given
      // (its timer may fire a little before that time has passed on performance.now()).
      this.#count(token, error instanceof StoreTimeoutError ? left : performance.now() - started);
      throw error;
    }
  }

  async release(key: string, token: string): Promise<boolean> {
    const left = this.#left(token);
    this.#counted.delete(token);
    if (left >= 1) return (await this.#eval(scripts.release, key, [token], left)) === 1;
    // The claim's store calls used up its deadline: the release is sent, after them, and not waited for.
    this.#releaseLate(key, token);
    throw new StoreTimeoutError(
      `${STORE}'s calls for this claim used up its ${this.operationTimeoutMs} ms (operationTimeoutMs): its ` +
        'release is sent and not waited for. Until it lands, a retry of the event is answered event_in_progress.',
    );
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.#eval(scripts.renew, key, [token, String(Math.ceil(leaseMs))])) === 1;
  }

  /** A write, then a WAIT that covers it (shared with the writes around it), within `ms`. */
  #confirm(key: string, script: Script, args: string[], ms = this.operationTimeoutMs): Promise<number> {
    const replicas = this.#replicas as RedisReplicas;
    const write = (send: Send, deadline: Deadline) => this.#evalScript(send, script, key, args, deadline);
    return withinOperationTimeout(
      ms,
      STORE,
      () => replicas.confirm(this.#key(key), write),
      this.operationTimeoutMs,
    ).catch((error: unknown) => {
      throw unconfirmed(error, this.#waitFor as Required<WaitForReplicas>);
    });
  }

  /**
   * What is left of a claim's store deadline: its claim, completion and release share one operationTimeoutMs
   * (the handlers' time between them not counted), so a store that stops answering holds a request that long.
   */
  #left(token: string): number {
    return Math.max(0, this.operationTimeoutMs - (this.#counted.get(token) ?? 0));
  }

  #count(token: string, spentMs: number): void {
    const spent = (this.#counted.get(token) ?? 0) + spentMs;
    this.#counted.delete(token);
    this.#counted.set(token, spent);
    if (this.#counted.size > MAX_COUNTED) this.#counted.delete(this.#counted.keys().next().value as string);
  }

  /**
   * A claim this side stopped waiting for may still run on the server (paused, or busy with a slow script),
   * and its lease would answer every retry 409 for a whole lease. Its release, sent on the same connection
   * after it, runs after it on the server and drops that lease by its token; it changes nothing when the
   * claim never ran. It has its own deadline, and nobody waits for it.
   */
  #releaseLate(key: string, token: string): void {
    this.#eval(scripts.release, key, [token]).catch(() => {});
  }

  /** The key in Redis: the prefix, then the key in a form UTF-8 keeps apart from every other. */
  #key(key: string): string {
    return this.prefix + wellFormedKey(key);
  }

  /** One operation, both round trips of a NOSCRIPT retry included, within `ms` (operationTimeoutMs). */
  #eval(script: Script, key: string, args: string[], ms = this.operationTimeoutMs): Promise<number> {
    return withinOperationTimeout(
      ms,
      STORE,
      (deadline) =>
        this.#link.session(this.#key(key), (send) => this.#evalScript(send, script, key, args, deadline)),
      this.operationTimeoutMs,
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
