import { createHash } from 'node:crypto';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import { type Deadline, operationTimeout, StoreTimeoutError, withinOperationTimeout } from './deadline.js';

import { newOwnerToken } from './owner-token.js';
import type { ClaimResult, DedupeStore } from './types.js';

/** The part of a node-redis v5/v6 client (`createClient()` from `redis`) the store uses. */
export interface NodeRedisClient {
  readonly isReady: boolean;
  /** node-redis 5/6 take `{ timeout }` (ms): the command leaves the client's queue once it passes. */
  sendCommand(args: ReadonlyArray<string>, options?: { timeout?: number }): Promise<unknown>;
}

/** The part of an ioredis client the store uses (tested with a stand-in of this shape, not with ioredis). */
export interface IoRedisClient {
  readonly status: string;
  call(command: string, ...args: string[]): Promise<unknown>;
}

export interface RedisDedupeStoreOptions {
  /** A connected client; attach `client.on('error', …)` yourself, or a dropped connection crashes the process. */
  client: NodeRedisClient | IoRedisClient;
  /** Prepended to every key. Default `mw:`. */
  prefix?: string;
  /**
   * Longest wait for one operation (milliseconds, default 3000). Past it the operation rejects and the event
   * is answered 503 store_unavailable, so the service retries it: a paused or unreachable server never holds
   * a request.
   */
  operationTimeoutMs?: number;
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
  readonly #send: (args: string[]) => Promise<unknown>;

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
    this.#send = sender(client, this.operationTimeoutMs);
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
    return (await this.#eval(scripts.complete, key, token, String(Math.ceil(retentionMs)))) === 1;
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

  /** One operation, both round trips of a NOSCRIPT retry included, within operationTimeoutMs. */
  #eval(script: Script, key: string, ...args: string[]): Promise<number> {
    return withinOperationTimeout(this.operationTimeoutMs, 'The Redis store', (deadline) =>
      this.#evalScript(script, key, args, deadline),
    );
  }

  async #evalScript(script: Script, key: string, args: string[], deadline: Deadline): Promise<number> {
    const tail = ['1', this.prefix + key, ...args];
    let reply: unknown;
    try {
      reply = await this.#send(['EVALSHA', script.sha, ...tail]);
    } catch (error) {
      // A new or restarted server has no script cache yet. Past the deadline the operation was answered (a
      // claim's release already sent): sent now, it would run after that release.
      if (!String((error as Error)?.message).startsWith('NOSCRIPT') || deadline.remainingMs() === 0)
        throw error;
      reply = await this.#send(['EVAL', script.source, ...tail]);
    }
    return Number(reply);
  }
}

function sender(
  client: NodeRedisClient | IoRedisClient | undefined,
  timeout: number,
): (args: string[]) => Promise<unknown> {
  const notReady = () =>
    Promise.reject(
      new Error(
        'The Redis client is not connected (never connected, or reconnecting after the server went away). ' +
          'Call `await client.connect()` at startup; until it reconnects, events are answered 503 and retried.',
      ),
    );
  if (typeof client !== 'object' || client === null) return refuse(client);
  if ('isReady' in client && typeof client.sendCommand === 'function') {
    // node-redis queues commands while offline, which would hold every request until the server is back.
    // node-redis's timeout drops a command still waiting to be written; one already sent is bounded by the
    // operation's deadline alone, as every command of an ioredis client is.
    return (args) => (client.isReady ? client.sendCommand(args, { timeout }) : notReady());
  }
  if ('status' in client && typeof client.call === 'function') {
    return ([command, ...rest]) =>
      client.status === 'ready' ? client.call(command as string, ...rest) : notReady();
  }
  return refuse(client);
}

function refuse(client: unknown): never {
  throw new WebhookConfigError(
    'new RedisDedupeStore({ client }) needs client: a node-redis client from createClient() (redis@5 or 6), ' +
      `or an ioredis client; got ${kindOf(client)}.`,
  );
}
