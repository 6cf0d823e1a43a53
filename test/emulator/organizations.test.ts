import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebhookAttempt } from '../../src/emulator/index.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { type CountingReceiver, startCountingReceiver } from '../support/child-processes.js';
import { until } from '../support/until.js';
import { call, changesOf, fast } from './helpers.js';

/*
 * Several organizations over real sockets: each has its own receiver, verifying with its own secret. A message
 * sent with one organization's key is signed with that organization's secret and posted to its endpoint only.
 */
const ACME_SECRET = 'whsec_acme_7f3a9c1e5b2d4f60';
const GLOBEX_SECRET = 'whsec_globex_2b8e4d6a0c1f3e57';

let acme: CountingReceiver;
let globex: CountingReceiver;
let emulator: Emulator;
const attempts: WebhookAttempt[] = [];

beforeAll(async () => {
  acme = await startCountingReceiver({ secret: ACME_SECRET });
  globex = await startCountingReceiver({ secret: GLOBEX_SECRET });
  emulator = await startEmulator({
    ...fast,
    organizations: [
      { name: 'acme', test: { endpoint: acme.url, secret: ACME_SECRET } },
      { name: 'globex', test: { endpoint: globex.url, secret: GLOBEX_SECRET } },
    ],
    onAttempt: (attempt) => attempts.push(attempt),
  });
});

afterAll(async () => {
  await emulator.close();
  await acme.close();
  await globex.close();
});

const message = { to: '+15550100001', sender: 'Acme', body: 'Hello' };
const sendAs = (key: string) => call(emulator, '/v1/messages', { key, body: message });
const eventOf = (id: string) => emulator.state.messages.get(id)?.events[0];

it("signs a message with its organization's secret and posts it to that organization's endpoint", async () => {
  expect(emulator.organizations.acme?.test.keys).toEqual(['sk_test_acme']);
  expect(emulator.organizations.globex?.live.keys).toEqual(['sk_live_globex']);
  const fromAcme = await sendAs('sk_test_acme');
  const fromGlobex = await sendAs('sk_test_globex');
  expect([fromAcme.status, fromGlobex.status]).toEqual([202, 202]);
  await until(() => eventOf(fromAcme.body.id) !== undefined && eventOf(fromGlobex.body.id) !== undefined, {
    changes: changesOf(emulator),
  });
  const acmeEvent = eventOf(fromAcme.body.id) as string;
  const globexEvent = eventOf(fromGlobex.body.id) as string;
  await until(() => acme.runs.has(acmeEvent) && globex.runs.has(globexEvent), {
    changes: changesOf(emulator),
  });
  // Each receiver verified with its own secret only, and saw only its own organization's event.
  expect([...acme.runs.keys()]).toEqual([acmeEvent]);
  expect([...globex.runs.keys()]).toEqual([globexEvent]);
  expect(emulator.state.messages.get(fromAcme.body.id)?.organization).toBe('acme');
  const acmeAttempt = attempts.find((attempt) => attempt.event_id === acmeEvent);
  expect(acmeAttempt).toMatchObject({
    organization: 'acme',
    mode: 'test',
    url: acme.url,
    status: 200,
    attempt: 1,
  });
});

it("keeps one organization's messages from another's key, and pauses one organization alone", async () => {
  const sent = await sendAs('sk_test_acme');
  expect((await call(emulator, `/v1/messages/${sent.body.id}`, { key: 'sk_test_globex' })).status).toBe(404);
  expect((await call(emulator, `/v1/messages/${sent.body.id}`, { key: 'sk_test_acme' })).status).toBe(200);

  emulator.setPaused('test', true, 'acme');
  const held = await sendAs('sk_test_acme');
  const flowing = await sendAs('sk_test_globex');
  const deliveryOf = (id: string) => emulator.state.deliveriesOf(id)[0];
  await until(() => deliveryOf(held.body.id)?.state === 'held', { changes: changesOf(emulator) });
  await until(() => deliveryOf(flowing.body.id)?.state === 'acknowledged', { changes: changesOf(emulator) });
  emulator.setPaused('test', false, 'acme');
  await until(() => deliveryOf(held.body.id)?.state === 'acknowledged', { changes: changesOf(emulator) });
});

it("runs the go-live check against the calling organization's endpoint", async () => {
  const { status, body } = await call(emulator, '/v1/webhooks/test', { key: 'sk_test_globex', body: {} });
  expect(status).toBe(200);
  expect(body).toMatchObject({ organization: 'globex', url: globex.url, passed: true });
  expect(body.checks[0].event_id).toMatch(/^evt_/);
  expect(globex.runs.has(body.checks[0].event_id)).toBe(true);
  expect(acme.runs.has(body.checks[0].event_id)).toBe(false);
  const none = await call(emulator, '/v1/webhooks/test', { key: 'sk_live_acme', body: {} });
  expect(none.body.error).toMatchObject({ code: 'no_endpoint' });
  expect(none.body.error.message).toContain("acme's live mode");
});

it('names the mistakes in organizations at start', async () => {
  const secret = ACME_SECRET;
  await expect(startEmulator({ organizations: [] })).rejects.toThrow(/one organization or more/);
  await expect(startEmulator({ organizations: [{ name: 'a' }], test: { secret } })).rejects.toThrow(
    /test and live are for a single organization/,
  );
  await expect(startEmulator({ organizations: [{ name: 'a' }, { name: 'a' }] })).rejects.toThrow(
    /organization a is listed twice/,
  );
  await expect(startEmulator({ organizations: [{ name: 'a b' }] })).rejects.toThrow(/letters, digits/);
  await expect(
    startEmulator({
      organizations: [
        { name: 'a', test: { keys: ['k'] } },
        { name: 'b', test: { keys: ['k'] } },
      ],
    }),
  ).rejects.toThrow(/API key k is given to both a test and b test/);
  await expect(
    startEmulator({ organizations: [{ name: 'a', test: { endpoint: 'ftp://x' } }, { name: 'b' }] }),
  ).rejects.toThrow(/organization a test\.endpoint/);
});

it('keeps a single organization as before: default, with the emulator keys', async () => {
  const single = await startEmulator({ test: { secret: ACME_SECRET } });
  try {
    expect(Object.keys(single.organizations)).toEqual(['default']);
    expect(single.modes.test.keys).toEqual(['sk_test_emulator']);
    expect(single.modes.live.keys).toEqual(['sk_live_emulator']);
    const sent = await call(single, '/v1/messages', { body: message });
    expect(sent.status).toBe(202);
    expect(sent.body).not.toHaveProperty('organization');
  } finally {
    await single.close();
  }
});

it('goes on delivering when an onAttempt listener throws or rejects', async () => {
  let calls = 0;
  const throwing = await startEmulator({
    ...fast,
    test: { endpoint: acme.url, secret: ACME_SECRET },
    onAttempt: () => {
      calls++;
      if (calls % 2 === 1) throw new Error('listener broke');
      return Promise.reject(new Error('listener rejected'));
    },
  });
  try {
    const sent = await Promise.all([1, 2].map(() => call(throwing, '/v1/messages', { body: message })));
    const acknowledged = () =>
      sent.every((s) => throwing.state.deliveriesOf(s.body.id)[0]?.state === 'acknowledged');
    await until(acknowledged, { changes: changesOf(throwing) });
    expect(calls).toBe(2);
  } finally {
    await throwing.close();
  }
});
