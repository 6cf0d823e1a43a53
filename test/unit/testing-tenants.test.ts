import { createServer } from 'node:http';
import request from 'supertest';
import { expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { WebhookConfigError } from '../../src/base/errors.js';
import { createReceiver } from '../../src/index.js';
import { createEvent, createTenantSigner } from '../../src/testing.js';

/*
 * createTenantSigner against an app that serves each tenant on its own path with its own secret (one receiver
 * per tenant here; a per-tenant lookup in one receiver sees the same requests).
 */
const secrets = { acme: 'whsec_kit_acme_1a2b3c4d5e6f', 'eu west': 'whsec_kit_euwest_6f5e4d3c2b1a' };

function tenantApp() {
  const handlers = new Map(
    Object.entries(secrets).map(([tenant, secret]) => [
      `/webhooks/${encodeURIComponent(tenant)}`,
      createNodeHandler(createReceiver({ secrets: secret })),
    ]),
  );
  return createServer((req, res) => {
    const handler = handlers.get(req.url ?? '');
    if (handler) return void handler(req, res);
    res.writeHead(404).end();
  });
}

it("signs with each tenant's secret and aims at its path, which the tenant's receiver accepts", async () => {
  const sign = createTenantSigner({ secrets });
  const acme = sign('acme', createEvent('message.delivered'));
  expect(acme.request.url).toBe('http://localhost/webhooks/acme');
  const app = tenantApp();
  const send = (signed: { body: string; headers: Record<string, string> }, path: string) =>
    request(app).post(path).set(signed.headers).send(signed.body);
  expect((await send(acme, '/webhooks/acme')).status).toBe(200);
  const euWest = sign('eu west', createEvent('message.delivered'));
  expect(new URL(euWest.request.url).pathname).toBe('/webhooks/eu%20west');
  expect((await send(euWest, '/webhooks/eu%20west')).status).toBe(200);
  // Signed for one tenant, it is refused by the other.
  expect((await send(sign('acme', createEvent('message.delivered')), '/webhooks/eu%20west')).status).toBe(
    401,
  );
});

it('takes a URL with {tenant}, a function for the secrets, and the usual options', () => {
  const sign = createTenantSigner({
    secrets: (tenant) => (tenant === 'acme' ? secrets.acme : undefined),
    url: 'https://app.test/hooks/{tenant}/messaging',
  });
  const signed = sign('acme', '{"id":"evt_1"}', { timestamp: 1_700_000_000 });
  expect(signed.request.url).toBe('https://app.test/hooks/acme/messaging');
  expect(signed.body).toBe('{"id":"evt_1"}');
  expect(signed.headers['webhook-signature']).toMatch(/^t=1700000000,v1=/);
});

it('throws for a tenant without a secret, naming it', () => {
  const sign = createTenantSigner({ secrets });
  expect(() => sign('globex', createEvent('message.delivered'))).toThrow(WebhookConfigError);
  expect(() => sign('toString', createEvent('message.delivered'))).toThrow(/no secret for tenant "toString"/);
});
