import { Cluster } from 'ioredis';
import { createCluster, createSentinel } from 'redis';
import { describe, expect, it } from 'vitest';
import { WebhookConfigError } from '../../src/index.js';
import { hashSlot } from '../../src/stores/cluster-slots.js';
import { RedisDedupeStore } from '../../src/stores/redis.js';

/* What the Redis store takes at creation: every client kind it can run on, and the settings it refuses. */
describe('RedisDedupeStore clients', () => {
  const sentinel = createSentinel({ name: 'primary', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] });
  const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] });
  const ioredisCluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });

  it('takes node-redis Sentinel and Cluster clients, and an ioredis Cluster, each with waitForReplicas', () => {
    const waitForReplicas = { count: 1, timeoutMs: 500 };
    expect(() => new RedisDedupeStore({ client: sentinel, waitForReplicas })).not.toThrow();
    expect(() => new RedisDedupeStore({ client: cluster, waitForReplicas })).not.toThrow();
    expect(() => new RedisDedupeStore({ client: ioredisCluster })).not.toThrow();
    expect(() => new RedisDedupeStore({ client: ioredisCluster, waitForReplicas })).not.toThrow();
  });

  it("computes a key's Cluster slot as Redis does, hash tags included", () => {
    // Redis's own answers to CLUSTER KEYSLOT.
    expect(hashSlot('somekey')).toBe(11058);
    expect(hashSlot('foo{hash_tag}')).toBe(2515);
    expect(hashSlot('bar{hash_tag}')).toBe(2515);
    // An empty first tag: the whole key is hashed.
    expect(hashSlot('foo{}{bar}')).toBe(8363);
    expect(hashSlot('{bull}:sms')).toBe(hashSlot('bull'));
  });

  it('refuses a waitForReplicas that cannot work, and a client it cannot run on, naming what to pass', () => {
    expect(
      () => new RedisDedupeStore({ client: cluster, waitForReplicas: { count: 1, timeoutMs: 0 } }),
    ).toThrow(/timeoutMs must be a whole number of milliseconds/);
    expect(
      () =>
        new RedisDedupeStore({
          client: cluster,
          waitForReplicas: { count: 1, timeoutMs: 9, whenFewer: 'x' as never },
        }),
    ).toThrow(/whenFewer must be 'reject' or 'accept'/);
    expect(() => new RedisDedupeStore({ client: {} as never })).toThrow(WebhookConfigError);
    expect(() => new RedisDedupeStore({ client: {} as never })).toThrow(
      /createSentinel\(\) or createCluster\(\)/,
    );
  });

  it('fails at once while a Sentinel or Cluster client is not connected (503, retried), never queueing', async () => {
    await expect(new RedisDedupeStore({ client: sentinel }).claim('live:evt_1', 1000)).rejects.toThrow(
      /not connected/,
    );
    await expect(new RedisDedupeStore({ client: cluster }).claim('live:evt_1', 1000)).rejects.toThrow(
      /not connected/,
    );
  });
});
