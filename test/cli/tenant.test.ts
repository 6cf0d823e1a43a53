import { afterAll, beforeAll, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { createReceiver } from '../../src/index.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, SECRET, startServer, type TestServer } from '../support/child-processes.js';

/*
 * send, check and simulate for one tenant of a multi-tenant app, over real sockets: the app answers
 * /webhooks/acme and /webhooks/globex, each verified with its own secret. --tenant fills {tenant} in the URL
 * and takes the tenant's secret from --secret or WEBHOOK_SECRET_<TENANT>.
 */
const ACME = 'whsec_tenant_acme_5c2e9a7b1d3f4e60';
const GLOBEX = 'whsec_tenant_globex_8a1d4c7e2b9f3a51';

let app: TestServer;
let base: string;
const seen = { acme: [] as string[], globex: [] as string[] };

beforeAll(async () => {
  await ensureBuilt();
  const handlers = Object.fromEntries(
    (['acme', 'globex'] as const).map((tenant) => {
      const receiver = createReceiver({ secrets: tenant === 'acme' ? ACME : GLOBEX });
      receiver.onAny((event) => void seen[tenant].push(event.id as string));
      return [tenant, createNodeHandler(receiver)];
    }),
  );
  app = await startServer((req, res) => {
    const handler = handlers[/^\/webhooks\/([\w-]+)$/.exec(req.url ?? '')?.[1] ?? ''];
    if (handler) return void handler(req, res);
    res.writeHead(404).end();
  });
  base = app.url.replace(/\/webhooks$/, '');
}, 180_000);

afterAll(() => app?.close());

it("send --tenant fills the URL and signs with the tenant's own variable", async () => {
  const url = `${base}/webhooks/{tenant}`;
  const env = { WEBHOOK_SECRET_ACME: ACME, WEBHOOK_SECRET_GLOBEX: GLOBEX, WEBHOOK_SECRET: SECRET };
  const acme = await runCli(['send', url, '--tenant', 'acme'], { env });
  expect(acme.code).toBe(0);
  expect(acme.stdout).toContain(`POST ${base}/webhooks/acme`);
  const globex = await runCli(['send', url, '--tenant', 'globex'], { env });
  expect(globex.code).toBe(0);
  expect([seen.acme.length, seen.globex.length]).toEqual([1, 1]);
  // --secret wins over the variable: the wrong tenant's secret is refused by that tenant.
  const crossed = await runCli(['send', url, '--tenant', 'globex', '--secret', ACME], { env });
  expect(crossed.code).toBe(1);
  expect(crossed.stdout).toMatch(/401/);
});

it('check and simulate take --tenant too', async () => {
  const url = `${base}/webhooks/{tenant}`;
  const check = await runCli(['check', url, '--tenant', 'globex', '--json'], {
    env: { WEBHOOK_SECRET_GLOBEX: GLOBEX },
  });
  expect(check.code).toBe(0);
  expect(JSON.parse(check.stdout)).toMatchObject({ url: `${base}/webhooks/globex`, passed: true });
  const simulate = await runCli([
    'simulate',
    url,
    '--tenant',
    'acme',
    '--secret',
    ACME,
    '--events',
    '5',
    '--json',
  ]);
  expect(simulate.code).toBe(0);
  expect(JSON.parse(simulate.stdout)).toMatchObject({ events: 5, unacknowledged: 0 });
});

it('names the mistakes: no secret for the tenant, no {tenant} in the URL, {tenant} without --tenant', async () => {
  const url = `${base}/webhooks/{tenant}`;
  const noSecret = await runCli(['send', url, '--tenant', 'eu-west'], { env: { WEBHOOK_SECRET: SECRET } });
  expect(noSecret.code).toBe(2);
  expect(noSecret.stderr).toContain(
    'send: no secret for tenant eu-west. Pass --secret <its signing secret> or set WEBHOOK_SECRET_EU_WEST.',
  );
  const noPlace = await runCli(['check', `${base}/webhooks`, '--tenant', 'acme', '--secret', ACME]);
  expect(noPlace.stderr).toMatch(/check: --tenant acme needs \{tenant\} in the URL where the tenant goes/);
  const noTenant = await runCli(['simulate', url, '--secret', ACME, '--events', '1']);
  expect(noTenant.stderr).toMatch(/simulate: the URL has \{tenant\}: pass --tenant NAME/);
});

it('says so in --help', async () => {
  for (const command of ['send', 'check', 'simulate']) {
    const help = await runCli([command, '--help']);
    expect(help.stdout).toMatch(/--tenant NAME +sign for one tenant of a multi-tenant receiver/);
    expect(help.stdout).toContain('WEBHOOK_SECRET_NAME');
  }
});
