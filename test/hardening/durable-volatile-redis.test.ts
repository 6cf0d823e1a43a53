import { createNodeRedisClient, Queue } from 'bullmq';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bullmqQueue } from '../../src/durable/bullmq/index.js';
import { checkRedisDurability } from '../../src/durable/bullmq/redis-durability.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { ensureBuilt } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { testRun } from '../support/harness/cluster.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { deliveredEvent, delivery, expectAccepted, expectRejected, SECRET } from '../support/unit.js';

/*
 * bullmqQueue checks on first use that Redis keeps what it acknowledged, on Redis servers of the test's own
 * (the shared one runs without persistence and is never reconfigured).
 */
const { run } = testRun();
const NO_PERSISTENCE = ['--save', '', '--appendonly', 'no'];
const configs = {
  durable: ['--save', '', '--appendonly', 'yes'],
  volatile: NO_PERSISTENCE,
  snapshotsOnly: ['--save', '60 1', '--appendonly', 'no'],
  evicting: ['--save', '', '--appendonly', 'yes', '--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'],
  configRenamed: [...NO_PERSISTENCE, '--rename-command', 'CONFIG', ''],
  infoRenamed: [...NO_PERSISTENCE, '--rename-command', 'INFO', ''],
};
const servers = {} as Record<keyof typeof configs, RedisServer>;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  await Promise.all(
    Object.entries(configs).map(async ([name, config]) => {
      servers[name as keyof typeof configs] = await ownRedisServer(config);
    }),
  );
}, 30_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await Promise.all(Object.values(servers).map((server) => server.remove()));
});

function connection(server: RedisServer) {
  const client = createClient({ url: server.url });
  client.on('error', () => {});
  // BullMQ leaves a client it was given open: it goes after the queue, before its server.
  closers.push(async () => client.destroy());
  return createNodeRedisClient(client);
}

/** A receiver on a queue of `server`, and what its onError heard. */
function receiverOn(server: RedisServer, options: { allowVolatileRedis?: boolean } = {}) {
  const queue = bullmqQueue({ connection: connection(server), name: `q-${run}`, ...options });
  closers.push(() => queue.close());
  const receiver = createReceiver({ secrets: SECRET, queue });
  const told: { code: string; message: string }[] = [];
  receiver.onError((error) => {
    told.push({ code: error.code, message: error.message });
  });
  return { queue, receiver, told };
}

async function jobsIn(server: RedisServer): Promise<number> {
  const redis = createClient({ url: server.url });
  await redis.connect();
  try {
    return (await redis.keys(`bull:q-${run}:*`)).filter((key) => /:[^:]+%3A/.test(key)).length;
  } finally {
    redis.destroy();
  }
}

describe('bullmqQueue on a Redis that keeps what it acknowledged', () => {
  it('answers 202 and tells onError nothing', async () => {
    const { receiver, told } = receiverOn(servers.durable);
    expectAccepted(await receiver.receive(delivery(deliveredEvent())), 202);
    expect(told).toEqual([]);
  });
});

describe('bullmqQueue on a Redis that can lose acknowledged jobs', () => {
  it('without persistence: refuses every delivery (503) naming the setting and the fix, stores nothing', async () => {
    const { queue, receiver, told } = receiverOn(servers.volatile);
    const event = deliveredEvent();
    expectRejected(await receiver.receive(delivery(event)), 503, 'queue_unavailable');
    expect(told).toHaveLength(1);
    expect(told[0]?.code).toBe('queue_unavailable');
    expect(told[0]?.message).toMatch(/appendonly is no/);
    expect(told[0]?.message).toMatch(/redis-cli CONFIG SET appendonly yes/);
    expect(told[0]?.message).toMatch(/allowVolatileRedis: true/);
    expect(told[0]?.message).not.toMatch(/maxmemory-policy is/);
    const refusal = await queue.ready().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WebhookConfigError);
    expect(await jobsIn(servers.volatile)).toBe(0);
  });

  it('checks again on the next delivery: once Redis is made durable, the event is taken', async () => {
    const server = await ownRedisServer(configs.volatile);
    closers.push(() => server.remove());
    const { receiver } = receiverOn(server);
    const event = deliveredEvent();
    expectRejected(await receiver.receive(delivery(event)), 503, 'queue_unavailable');
    const admin = createClient({ url: server.url });
    await admin.connect();
    await admin.configSet('appendonly', 'yes');
    admin.destroy();
    expectAccepted(await receiver.receive(delivery(event)), 202);
  });

  it('RDB snapshots alone do not count: a crash loses what came after the last one', async () => {
    const { receiver, told } = receiverOn(servers.snapshotsOnly);
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 503, 'queue_unavailable');
    expect(told[0]?.message).toMatch(/appendonly is no/);
  });

  it('an evicting maxmemory-policy is refused, named with its fix', async () => {
    const { receiver, told } = receiverOn(servers.evicting);
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 503, 'queue_unavailable');
    expect(told[0]?.message).toMatch(/maxmemory-policy is allkeys-lru/);
    expect(told[0]?.message).toMatch(/CONFIG SET maxmemory-policy noeviction/);
    expect(told[0]?.message).not.toMatch(/appendonly is no/);
  });

  it('the check runs where CONFIG is renamed away (it reads INFO)', async () => {
    const { receiver, told } = receiverOn(servers.configRenamed);
    expectRejected(await receiver.receive(delivery(deliveredEvent())), 503, 'queue_unavailable');
    expect(told[0]?.message).toMatch(/appendonly is no/);
  });

  it('allowVolatileRedis: true takes the event (tests, throwaway Redis)', async () => {
    const { receiver, told } = receiverOn(servers.volatile, { allowVolatileRedis: true });
    expectAccepted(await receiver.receive(delivery(deliveredEvent())), 202);
    expect(told).toEqual([]);
  });

  it('allowVolatileRedis must be a boolean', () => {
    expect(() =>
      bullmqQueue({
        connection: connection(servers.durable),
        allowVolatileRedis: 'yes' as unknown as boolean,
      }),
    ).toThrow(/allowVolatileRedis must be true or false, got "yes"/);
  });
});

describe('a refused Redis with nobody listening', () => {
  it('without onError or a logger: printed once, naming the setting and the fix', async () => {
    const queue = bullmqQueue({ connection: connection(servers.volatile), name: `q-${run}-unheard` });
    closers.push(() => queue.close());
    const receiver = createReceiver({ secrets: SECRET, queue });
    const printed: unknown[][] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args) => {
      printed.push(args);
    });
    try {
      expectRejected(await receiver.receive(delivery(deliveredEvent())), 503, 'queue_unavailable');
      expectRejected(await receiver.receive(delivery(deliveredEvent())), 503, 'queue_unavailable');
    } finally {
      spy.mockRestore();
    }
    expect(printed).toHaveLength(1);
    expect(printed[0]).toHaveLength(1);
    expect(String(printed[0]?.[0])).toMatch(
      /^messaging-webhooks: .*appendonly is no.*CONFIG SET appendonly yes/,
    );
  });

  it('examples/workers: the receiver names the refusal and exits, never saying it receives', async () => {
    await ensureBuilt();
    const example = start([process.execPath, 'examples/workers/receiver.mjs'], {
      PORT: '0',
      REDIS_URL: servers.volatile.url,
      QUEUE: `q-${run}-example`,
    });
    closers.push(() => example.stop());
    // waitFor rejects once the child exits without the line.
    const receiving = await example.waitFor(/Receiving webhooks/).then(
      () => true,
      () => false,
    );
    expect(receiving).toBe(false);
    expect(await example.exited).toBe(1);
    expect(example.output()).toMatch(/appendonly is no.*CONFIG SET appendonly yes/s);
    expect(example.output()).not.toContain('Receiving webhooks');
  }, 60_000);
});

describe('bullmqQueue where Redis refuses INFO', () => {
  it('takes the event and tells onError once that the check could not run', async () => {
    // BullMQ reads INFO too; skipVersionCheck is what such a Redis needs anyway.
    const bull = new Queue(`q-${run}`, {
      connection: connection(servers.infoRenamed),
      skipVersionCheck: true,
    });
    closers.push(() => bull.close());
    const queue = bullmqQueue({ queue: bull });
    const receiver = createReceiver({ secrets: SECRET, queue });
    const told: string[] = [];
    receiver.onError((error, ctx) => {
      told.push(`${error.code}/${ctx.reason}: ${error.message}`);
    });
    expectAccepted(await receiver.receive(delivery(deliveredEvent())), 202);
    expectAccepted(await receiver.receive(delivery(deliveredEvent())), 202);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^persistence_unchecked\/persistence_unchecked: Could not check/);
    expect(told[0]).toMatch(/appendonly yes and maxmemory-policy noeviction/);
  });
});

describe('checkRedisDurability where nothing can be read', () => {
  // Servers that cannot run here: a backend without a raw client, a Redis-alike whose INFO lacks the fields.
  it('warns instead of refusing', async () => {
    expect(await checkRedisDurability(undefined)).toMatch(/exposes no Redis client/);
    const bare = { info: async () => '# Server\r\nredis_version:7.2.0\r\n' };
    expect(await checkRedisDurability(bare)).toMatch(/has no aof_enabled or maxmemory_policy/);
  });

  it('rethrows an outage, so the delivery is answered 503 and the next one checks again', async () => {
    const down = {
      info: async () => {
        throw new Error('Socket closed unexpectedly');
      },
    };
    await expect(checkRedisDurability(down)).rejects.toThrow('Socket closed unexpectedly');
  });
});
