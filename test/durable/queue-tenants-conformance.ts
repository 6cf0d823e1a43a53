import { expect, it } from 'vitest';
import type { ReceiveRequest } from '../../src/adapter.js';
import type { DurableQueue, DurableWorker } from '../../src/index.js';
import { createReceiver, type ErrorContext, type HandlerContext } from '../../src/index.js';
import { deliveredEvent, delivery, expectAccepted, uniqueId } from '../support/unit.js';
import { until } from '../support/until.js';

const SECRETS: Record<string, string> = {
  acme: 'whsec_durable_acme_3f1a5c7e9b2d',
  'globex:eu': 'whsec_durable_globex_8d6b4f2a0c1e',
};

const to = (account: string, event: unknown): ReceiveRequest => ({
  ...delivery(event, { secret: SECRETS[account] }),
  params: { account },
});

/**
 * A receiver for many accounts handing off to a durable queue: the tenant travels with the job to the worker's
 * handlers and onError, and two tenants' events with one id are two jobs. Called inside describeDurableQueue.
 */
export function itHandsTheTenantOff<Q extends DurableQueue>(
  makeQueue: () => Q,
  start: (receiver: ReturnType<typeof createReceiver>, queue: Q) => Promise<DurableWorker>,
): void {
  it("hands the tenant to the worker's handlers and onError, two tenants' events with one id apart", async () => {
    const queue = makeQueue();
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: (tenant) => SECRETS[tenant],
      queue,
    });
    const seen: Pick<HandlerContext<unknown>, 'tenant' | 'dedupeKey' | 'attempt'>[] = [];
    receiver.on('message.delivered', (_event, ctx) => {
      seen.push({ tenant: ctx.tenant, dedupeKey: ctx.dedupeKey, attempt: ctx.attempt });
    });
    receiver.on('message.failed', () => {
      throw new Error('the CRM is down');
    });
    const told: Pick<ErrorContext, 'reason' | 'tenant'>[] = [];
    receiver.onError((_error, ctx) => {
      told.push({ reason: ctx.reason, tenant: ctx.tenant });
    });
    const event = deliveredEvent();
    const failed = { ...deliveredEvent(), type: 'message.failed', data: { message_id: uniqueId('msg_') } };
    try {
      expectAccepted(await receiver.receive(to('acme', event)), 202);
      expectAccepted(await receiver.receive(to('globex:eu', event)), 202);
      expectAccepted(await receiver.receive(to('globex:eu', failed)), 202);
      const worker = await start(receiver, queue);
      await until(() => worker.counters().completed === 2 && worker.counters().deadLettered === 1);
      expect(seen.sort((a, b) => String(a.tenant).localeCompare(String(b.tenant)))).toEqual([
        { tenant: 'acme', dedupeKey: `tenant:acme:live:${event.id}`, attempt: 1 },
        { tenant: 'globex:eu', dedupeKey: `tenant:globex%3Aeu:live:${event.id}`, attempt: 1 },
      ]);
      // A job that failed its last attempt: onError hears of it with the tenant of its delivery.
      expect(told).toEqual([{ reason: 'handler_failed', tenant: 'globex:eu' }]);
    } finally {
      await receiver.close();
    }
  });
}
