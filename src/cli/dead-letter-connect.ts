import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import type { DeadLetters } from '../durable/dead-letters.js';
import { integer, UsageError } from './args.js';

/** The options that say where the dead letters are: the same engine, address and queue the workers use. */
export const engineOptions = {
  engine: { type: 'string' },
  'redis-url': { type: 'string' },
  'redis-sentinels': { type: 'string' },
  'sentinel-name': { type: 'string' },
  prefix: { type: 'string' },
  'database-url': { type: 'string' },
  schema: { type: 'string' },
  'amqp-url': { type: 'string' },
  'nats-url': { type: 'string' },
  table: { type: 'string' },
  queue: { type: 'string' },
  deadline: { type: 'string' },
} as const;

export const ENGINE_HELP = `Where the dead letters are (what your workers use):
  --engine NAME       bullmq, pg-boss, rabbitmq or nats (or set ENGINE); default: the engine of the URL
                      given, else bullmq
  --redis-url URL     BullMQ's Redis (or set REDIS_URL; default redis://127.0.0.1:6379)
  --redis-sentinels H:P,H:P  BullMQ's Redis behind Sentinel: the sentinels' addresses, with --sentinel-name
  --sentinel-name N   the primary's name the sentinels monitor
  --prefix P          BullMQ's key prefix (default bull)
  --database-url URL  pg-boss's PostgreSQL (or set DATABASE_URL)
  --schema S          pg-boss's schema (default pgboss)
  --amqp-url URL      RabbitMQ (or set RABBITMQ_URL); its ledger: --database-url (and --table)
  --nats-url URL      NATS (or set NATS_URL); its ledger: --database-url (and --table)
  --table NAME        the ledger's table of rabbitmq and nats (default messaging_webhooks_jobs)
  --queue NAME        the queue's name (or set QUEUE; default the library's: messaging-webhooks on BullMQ,
                      RabbitMQ and NATS, messaging_webhooks on pg-boss)
  --deadline MS       how long each call to the engine may take (default 10000)`;

type EngineValues = { [K in keyof typeof engineOptions]?: string };

export interface OpenedDeadLetters {
  deadLetters: DeadLetters;
  /** The queue, as messages name it. */
  queue: string;
  /** Closes the dead letters and the connection opened for them. */
  close(): Promise<void>;
}

type EngineName = 'bullmq' | 'pg-boss' | 'rabbitmq' | 'nats';
const ENGINES: readonly string[] = ['bullmq', 'pg-boss', 'rabbitmq', 'nats'];

/** The engine named by --engine, else by the URL flag given, else ENGINE, else BullMQ. */
function engineOf(command: string, values: EngineValues): EngineName {
  const named =
    values.engine ??
    (values['amqp-url'] !== undefined ? 'rabbitmq' : undefined) ??
    (values['nats-url'] !== undefined ? 'nats' : undefined) ??
    (values['database-url'] !== undefined && values['redis-url'] === undefined ? 'pg-boss' : undefined) ??
    (values['redis-url'] !== undefined || values['redis-sentinels'] !== undefined ? 'bullmq' : undefined) ??
    process.env.ENGINE ??
    'bullmq';
  if (!ENGINES.includes(named)) {
    throw new UsageError(`${command}: --engine must be bullmq, pg-boss, rabbitmq or nats, got '${named}'.`);
  }
  return named as EngineName;
}

/** Opens the dead letters the flags name; the engine's package is loaded only now (an optional peer). */
export async function openDeadLetters(command: string, values: EngineValues): Promise<OpenedDeadLetters> {
  const engine = engineOf(command, values);
  const deadlineMs = integer(command, 'deadline', values.deadline, 10_000, 1, 600_000);
  const name = values.queue ?? process.env.QUEUE;
  if (engine === 'rabbitmq' || engine === 'nats')
    return brokerDeadLetters(command, engine, values, deadlineMs, name);
  if (engine === 'pg-boss') {
    const connectionString = values['database-url'] ?? process.env.DATABASE_URL;
    if (!connectionString) {
      throw new UsageError(
        `${command}: pg-boss needs PostgreSQL: pass --database-url postgres://… or set DATABASE_URL.`,
      );
    }
    const { pgBossDeadLetters } = await load(() => import('../durable/pg-boss/index.js'), 'pg-boss');
    const deadLetters = pgBossDeadLetters({
      connectionString,
      deadlineMs,
      ...(name === undefined ? {} : { name }),
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    });
    return { deadLetters, queue: name ?? 'messaging_webhooks', close: () => deadLetters.close() };
  }
  const url = values['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const { bullmqDeadLetters } = await load(() => import('../durable/bullmq/index.js'), 'bullmq');
  const redis =
    values['redis-sentinels'] === undefined
      ? await redisConnection(url, deadlineMs)
      : await sentinelConnection(command, values['redis-sentinels'], values['sentinel-name'], deadlineMs);
  const deadLetters = bullmqDeadLetters({
    connection: redis.connection,
    deadlineMs,
    ...(name === undefined ? {} : { name }),
    ...(values.prefix === undefined ? {} : { prefix: values.prefix }),
  });
  return {
    deadLetters,
    queue: name ?? 'messaging-webhooks',
    async close() {
      await deadLetters.close();
      redis.close();
    },
  };
}

/** The dead letters of a RabbitMQ or NATS queue: the broker, and the ledger in PostgreSQL that keeps them. */
async function brokerDeadLetters(
  command: string,
  engine: 'rabbitmq' | 'nats',
  values: EngineValues,
  deadlineMs: number,
  name: string | undefined,
): Promise<OpenedDeadLetters> {
  const connectionString = values['database-url'] ?? process.env.DATABASE_URL;
  if (!connectionString) {
    throw new UsageError(
      `${command}: ${engine} keeps its dead letters in its ledger in PostgreSQL: pass --database-url postgres://… or set DATABASE_URL.`,
    );
  }
  const ledger = { connectionString, ...(values.table === undefined ? {} : { table: values.table }) };
  const named = { deadlineMs, ledger, ...(name === undefined ? {} : { name }) };
  let deadLetters: DeadLetters;
  if (engine === 'rabbitmq') {
    const url = values['amqp-url'] ?? process.env.RABBITMQ_URL ?? 'amqp://127.0.0.1:5672';
    const { rabbitmqDeadLetters } = await load(() => import('../durable/rabbitmq/index.js'), 'amqplib');
    deadLetters = rabbitmqDeadLetters({ url, ...named });
  } else {
    const servers = values['nats-url'] ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    const { natsDeadLetters } = await load(() => import('../durable/nats/index.js'), '@nats-io/jetstream');
    deadLetters = natsDeadLetters({ servers, ...named });
  }
  return { deadLetters, queue: name ?? 'messaging-webhooks', close: () => deadLetters.close() };
}

async function load<T>(loader: () => Promise<T>, peer: string): Promise<T> {
  try {
    return await loader();
  } catch (error) {
    if ((error as { code?: string })?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(`the ${peer} engine needs its package: npm install ${peer}, then run it again.`);
  }
}

/**
 * A node-redis client through BullMQ's adapter when `redis` is installed (the client the docs use), connected
 * here within the deadline (BullMQ connecting a client closed a moment later would keep the process alive);
 * else the URL itself, which BullMQ connects with ioredis.
 */
async function redisConnection(url: string, deadlineMs: number) {
  const { createNodeRedisClient } = await import('bullmq');
  let createClient: typeof import('redis').createClient;
  try {
    ({ createClient } = await import('redis'));
  } catch {
    return { connection: { url }, close() {} };
  }
  const client = createClient({ url });
  let failure: string | undefined;
  client.on('error', (error: Error) => {
    failure = error.message;
  });
  if ((await withTimeout(client.connect(), deadlineMs)) === TIMED_OUT) {
    client.destroy();
    const host = URL.canParse(url) ? new URL(url).host : 'the address given';
    throw new Error(
      `Redis at ${host} did not answer within ${deadlineMs} ms${failure ? ` (${failure})` : ''}. Check that Redis is up and --redis-url (or REDIS_URL) points at it.`,
    );
  }
  return { connection: createNodeRedisClient(client), close: () => client.destroy() };
}

/** A node-redis Sentinel client through BullMQ's adapter: it finds the primary, also after a failover. */
async function sentinelConnection(
  command: string,
  sentinels: string,
  name: string | undefined,
  deadlineMs: number,
) {
  if (!name)
    throw new UsageError(`${command}: --redis-sentinels needs --sentinel-name (the primary's name).`);
  const sentinelRootNodes = sentinels.split(',').map((address) => {
    const [host, port] = address.trim().split(':');
    if (!host || !/^\d+$/.test(port ?? '')) {
      throw new UsageError(
        `${command}: --redis-sentinels takes host:port,host:port; got ${JSON.stringify(address)}.`,
      );
    }
    return { host, port: Number(port) };
  });
  const { createNodeRedisClient } = await import('bullmq');
  const { createSentinel } = await load(() => import('redis'), 'redis');
  const client = createSentinel({ name, sentinelRootNodes });
  client.on('error', () => {});
  if ((await withTimeout(client.connect(), deadlineMs)) === TIMED_OUT) {
    void client.destroy();
    throw new Error(
      `The sentinels at ${JSON.stringify(sentinels)} did not name a reachable primary ${JSON.stringify(name)} within ${deadlineMs} ms. Check --redis-sentinels and --sentinel-name.`,
    );
  }
  return { connection: createNodeRedisClient(client), close: () => void client.destroy() };
}
