import { createNodeRedisClient } from 'bullmq';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import { bullmqQueue, createBullmqWorker } from '../../src/durable/bullmq/index.js';
import { createReceiver, type HandlerContext } from '../../src/index.js';
import { REDIS_URL, testRun } from '../support/harness/cluster.js';
import { deleteKeys } from '../support/harness/redis-keys.js';
import { deliveredEvent, delivery, expectAccepted } from '../support/unit.js';
import { until } from '../support/until.js';

const { run } = testRun();
const prefix = `mw-test:${run}:tenants`;
const SECRETS: Record<string, string> = {
  acme: 'whsec_durable_acme_3f1a5c7e9b2d',
  'globex:eu': 'whsec_durable_globex_8d6b4f2a0c1e',
};

const to = (account: string, event: unknown): ReceiveRequest => ({
  ...delivery(event, { secret: SECRETS[account] }),
  params: { account },
});

afterAll(async () => {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await deleteKeys(redis, `${prefix}:*`);
  redis.destroy();
});

describe('tenants through BullMQ', () => {
  it("hands the tenant to the worker's handlers, and keeps two tenants' events with one id apart", async () => {
    const queue = bullmqQueue({
      connection: createNodeRedisClient(createClient({ url: REDIS_URL })),
      prefix,
      name: 'tenants',
      allowVolatileRedis: true,
    });
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: (tenant) => SECRETS[tenant],
      queue,
    });
    const seen: Pick<HandlerContext<unknown>, 'tenant' | 'dedupeKey' | 'attempt'>[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      seen.push({ tenant: ctx.tenant, dedupeKey: ctx.dedupeKey, attempt: ctx.attempt });
    });
    const event = deliveredEvent();
    try {
      expectAccepted(await receiver.receive(to('acme', event)), 202);
      expectAccepted(await receiver.receive(to('globex:eu', event)), 202);
      expect(await queue.queue.getJobCounts('wait')).toEqual({ wait: 2 });
      const worker = await createBullmqWorker({ receiver, queue });
      await until(() => worker.counters().completed === 2);
      await worker.close();
      expect(seen.sort((a, b) => String(a.tenant).localeCompare(String(b.tenant)))).toEqual([
        { tenant: 'acme', dedupeKey: `tenant:acme:live:${event.id}`, attempt: 1 },
        { tenant: 'globex:eu', dedupeKey: `tenant:globex%3Aeu:live:${event.id}`, attempt: 1 },
      ]);
    } finally {
      await receiver.close();
      await queue.close();
    }
  });
});
