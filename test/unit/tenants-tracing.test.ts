import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { openTelemetry } from '../../src/observability/opentelemetry.js';
import { type Recorded, recordSpans } from '../support/tracing.js';
import { deliveredEvent, delivery } from '../support/unit.js';

let recorded: Recorded;
beforeEach(() => {
  recorded = recordSpans();
});
afterEach(() => recorded.close());

const SECRET_OF: Record<string, string> = { acme: 'whsec_traced_acme_9b7d5f3a1c2e' };

describe('a traced delivery of a tenant', () => {
  it('carries messaging_webhooks.tenant, for a delivery verified and for an unknown tenant alike', async () => {
    const receiver = createReceiver({
      tenant: (request) => request.params.account,
      secrets: (tenant) => SECRET_OF[tenant],
      tracing: openTelemetry({ tracerProvider: recorded.provider }),
    });
    receiver.on('message.delivered', () => {});
    const post = (account: string) => ({
      ...delivery(deliveredEvent(), { secret: SECRET_OF.acme }),
      params: { account },
      route: '/webhooks/:account',
    });
    expect((await receiver.receive(post('acme'))).status).toBe(200);
    expect((await receiver.receive(post('umbrella'))).status).toBe(401);
    const deliveries = recorded.spans().filter((span) => span.name === 'POST /webhooks/:account');
    expect(
      deliveries.map((span) => [
        span.attributes['messaging_webhooks.outcome'],
        span.attributes['messaging_webhooks.tenant'],
      ]),
    ).toEqual([
      ['processed', 'acme'],
      ['unknown_tenant', 'umbrella'],
    ]);
  });
});
