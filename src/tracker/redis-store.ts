import { option, rules } from '../base/options.js';
import { operationTimeout, withinOperationTimeout } from '../stores/deadline.js';
import { type RedisLink, type RedisStoreClient, redisLink } from '../stores/redis-client.js';
import { DEFAULT_STATUS_RETENTION_MS } from './memory-store.js';
import { isFinal, type TrackedMessage } from './record.js';
import type { StatusStore } from './store.js';

export interface RedisStatusStoreOptions {
  /** A connected node-redis (createClient, createSentinel) or ioredis client, as the Redis dedupe store takes. */
  client: RedisStoreClient;
  /**
   * Prepended to every key. Default `mw:status:`. On a Cluster, give it a hash tag (`{mw-status}:`): a write
   * touches the message's key and the index of open messages, which must share a slot.
   */
  prefix?: string;
  /** How long a final message is kept (milliseconds, as its key's TTL). Default 30 days. */
  retentionMs?: number;
  /** Longest wait for one operation (milliseconds). Default 3000. */
  operationTimeoutMs?: number;
}

/*
 * One hash per message (v: version, r: the record as JSON) and one sorted set of the open ones, scored by when
 * they were first expected. WRITE is the compare and set: one script, so atomic on the server.
 */
const WRITE = `
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', ARGV[3])
if ARGV[4] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
else
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[5])
  redis.call('PERSIST', KEYS[1])
end
return 1`;

/* The open messages' records, oldest first; an id whose key is gone (retention) leaves the index. */
const OPEN = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local records = {}
for _, id in ipairs(ids) do
  local record = redis.call('HGET', ARGV[3] .. id, 'r')
  if record then table.insert(records, record) else redis.call('ZREM', KEYS[1], id) end
end
return records`;

const STORE = 'The Redis status store';

/** Statuses shared by every process through Redis; the client seam is the Redis dedupe store's. */
export class RedisStatusStore implements StatusStore {
  readonly prefix: string;
  readonly retentionMs: number;
  readonly operationTimeoutMs: number;
  readonly #link: RedisLink;

  constructor(options: RedisStatusStoreOptions) {
    const where = 'new RedisStatusStore(…): ';
    this.prefix = option('prefix', options?.prefix, 'mw:status:', rules.string, where);
    this.retentionMs = option(
      'retentionMs',
      options?.retentionMs,
      DEFAULT_STATUS_RETENTION_MS,
      rules.whole({ min: 1 }),
      where,
    );
    this.operationTimeoutMs = operationTimeout('RedisStatusStore', options?.operationTimeoutMs);
    this.#link = redisLink(options?.client, this.operationTimeoutMs, 'RedisStatusStore');
  }

  async read(messageId: string): Promise<TrackedMessage | undefined> {
    const key = this.#key(messageId);
    const reply = await this.#send(key, ['HGET', key, 'r']);
    return typeof reply === 'string' ? (JSON.parse(reply) as TrackedMessage) : undefined;
  }

  async write(record: TrackedMessage, expectedVersion: number): Promise<boolean> {
    const key = this.#key(record.messageId);
    const final = isFinal(record.status) ? '1' : '0';
    const args = [
      String(expectedVersion),
      String(record.version),
      JSON.stringify(record),
      final,
      record.messageId,
      String(this.retentionMs),
      String(record.expectedAt),
    ];
    const reply = await this.#send(key, ['EVAL', WRITE, '2', key, this.#openKey, ...args]);
    return Number(reply) === 1;
  }

  async open(expectedBefore: number, limit: number): Promise<TrackedMessage[]> {
    const args = [String(expectedBefore), String(limit), `${this.prefix}m:`];
    const reply = await this.#send(this.#openKey, ['EVAL', OPEN, '1', this.#openKey, ...args]);
    return (reply as string[]).map((record) => JSON.parse(record) as TrackedMessage);
  }

  async countOpen(): Promise<number> {
    return Number(await this.#send(this.#openKey, ['ZCARD', this.#openKey]));
  }

  async close(): Promise<void> {}

  get #openKey(): string {
    return `${this.prefix}open`;
  }

  #key(messageId: string): string {
    return `${this.prefix}m:${messageId}`;
  }

  #send(key: string, args: string[]): Promise<unknown> {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, () =>
      this.#link.session(key, (send) => send(args)),
    );
  }
}
