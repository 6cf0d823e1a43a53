import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { type CountingReceiver, SECRET, startCountingReceiver } from '../support/child-processes.js';
import { until } from '../support/until.js';
import { call, changesOf, fast } from './helpers.js';

let receiver: CountingReceiver;
let emulator: Emulator;

beforeAll(async () => {
  receiver = await startCountingReceiver();
  emulator = await startEmulator({
    ...fast,
    test: { endpoint: receiver.url, secret: SECRET, rateLimit: { requests: 1000, windowSeconds: 1 } },
    seed: 7,
  });
});

afterAll(async () => {
  await emulator.close();
  await receiver.close();
});

const message = { to: '+15550100001', sender: 'Acme', body: 'Hello' };

describe('requests', () => {
  it('answers a missing or unknown key 401 unauthorized in the service error shape', async () => {
    for (const key of [null, 'sk_test_nope']) {
      const { status, body } = await call(emulator, '/v1/messages', { key, body: message });
      expect(status).toBe(401);
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.request_id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(body.error.message).toMatch(/Bearer/);
    }
  });

  it('needs JSON with application/json, an international number and an approved sender', async () => {
    const text = await call(emulator, '/v1/messages', {
      body: JSON.stringify(message),
      contentType: 'text/plain',
    });
    expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type']);
    const broken = await call(emulator, '/v1/messages', { body: '{"to":' });
    expect([broken.status, broken.body.error.code]).toEqual([400, 'invalid_json']);
    const local = await call(emulator, '/v1/messages', { body: { ...message, to: '0612345678' } });
    expect([local.status, local.body.error.code]).toEqual([400, 'invalid_parameter']);
    expect(local.body.error.message).toMatch(/^to: .*international/);
    const missing = await call(emulator, '/v1/messages', { body: { to: message.to, sender: 'Acme' } });
    expect(missing.body.error.message).toBe('body: Required.');
    const sender = await call(emulator, '/v1/messages', { body: { ...message, sender: 'Unknown' } });
    expect([sender.status, sender.body.error.code]).toEqual([400, 'invalid_parameter']);
    expect(sender.body.error.message).toMatch(/not approved.*Acme/);
  });

  it('answers 429 rate_limited with retry_after_seconds past the quota', async () => {
    const limited = await startEmulator({ test: { rateLimit: { requests: 2, windowSeconds: 60 } } });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await call(limited, '/v1/contacts?group_id=grp_demo'));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
      const { body, headers } = answers[2] as Awaited<ReturnType<typeof call>>;
      expect(body.error.code).toBe('rate_limited');
      expect(body.error.retry_after_seconds).toBeGreaterThan(0);
      expect(headers.get('retry-after')).toBe(String(body.error.retry_after_seconds));
      // The live key has its own quota.
      const live = await call(limited, '/v1/contacts?group_id=grp_demo', { key: limited.modes.live.keys[0] });
      expect(live.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('lists a group and names the known ones for an unknown group', async () => {
    const { status, body } = await call(emulator, '/v1/contacts?group_id=grp_demo');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(3);
    expect(body.data[0]).toMatchObject({ name: 'Ada', phone: '+15550100001' });
    const unknown = await call(emulator, '/v1/contacts?group_id=grp_nope');
    expect([unknown.status, unknown.body.error.message]).toEqual([
      404,
      'group_id: no grp_nope. Known: grp_demo.',
    ]);
  });
});

describe('lifecycle and webhooks', () => {
  it('moves a message queued → submitted → delivered and delivers message.delivered once', async () => {
    const sent = await call(emulator, '/v1/messages', { body: message });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'queued', mode: 'test' });
    const record = emulator.state.messages.get(sent.body.id);
    await until(() => emulator.state.deliveriesOf(sent.body.id)[0]?.state === 'acknowledged', {
      changes: changesOf(emulator),
    });
    expect(record?.history.map((step) => step.status)).toEqual(['queued', 'submitted', 'delivered']);
    const [eventId] = record?.events ?? [];
    expect(receiver.runs.get(eventId as string)).toBe(1);
    expect(receiver.events.get(eventId as string)).toMatchObject({
      type: 'message.delivered',
      data: { message_id: sent.body.id, to: message.to, operator: expect.stringMatching(/^op_/) },
    });
    const status = await call(emulator, `/v1/messages/${sent.body.id}`);
    expect(status.body).toMatchObject({ status: 'delivered', emulator_only: true });
    expect(status.headers.get('emulator-only')).toBe('true');
  });

  it('fans a campaign out to the group, and an OTP carries its purpose and ttl', async () => {
    const campaign = await call(emulator, '/v1/campaigns', {
      body: { name: 'Welcome', sender: 'Acme', template_id: 'tmpl_welcome', group_id: 'grp_demo' },
    });
    expect(campaign.status).toBe(202);
    expect(campaign.body.recipients).toBe(3);
    const bodies = campaign.body.message_ids.map((id: string) => emulator.state.messages.get(id)?.body);
    expect(bodies).toContain('Hello Grace, welcome to Acme.');
    const otp = await call(emulator, '/v1/otp/send', {
      body: { to: '+15550100002', purpose: 'login', ttl_seconds: 300 },
    });
    expect(otp.body.otp).toMatchObject({ purpose: 'login', ttl_seconds: 300 });
    await until(() => emulator.state.deliveriesOf(otp.body.id)[0]?.state === 'acknowledged', {
      changes: changesOf(emulator),
    });
    const eventId = emulator.state.messages.get(otp.body.id)?.events[0] as string;
    expect(receiver.events.get(eventId)).toMatchObject({ data: { purpose: 'login', ttl_seconds: 300 } });
  });

  it('names the failure event by option, retries rejected attempts and records each one', async () => {
    const failing = await startCountingReceiver({ fail: (_id, run) => run === 1 });
    const chaotic = await startEmulator({
      ...fast,
      schedule: { ...fast.schedule, failureRate: 1 },
      failureEvent: 'message.undelivered',
      test: { endpoint: failing.url, secret: SECRET },
      chaos: { stale: 1 },
      seed: 3,
    });
    try {
      const sent = await call(chaotic, '/v1/messages', { body: message });
      await until(() => chaotic.state.deliveriesOf(sent.body.id)[0]?.state === 'acknowledged', {
        changes: changesOf(chaotic),
      });
      const [delivery] = chaotic.state.deliveriesOf(sent.body.id);
      // Stale on purpose (rejected), then the handler's first run fails (500), then acknowledged.
      expect(delivery?.attempts.map((a) => [a.status, a.reason, a.variant])).toEqual([
        [401, 'stale_timestamp', 'stale'],
        [500, 'handler_failed', undefined],
        [200, undefined, undefined],
      ]);
      expect(delivery?.attempts.every((a) => a.ms > 0 && a.at.endsWith('+00:00'))).toBe(true);
      expect(delivery?.event_type).toBe('message.undelivered');
      expect(failing.runs.get(delivery?.event_id as string)).toBe(1);
    } finally {
      await chaotic.close();
      await failing.close();
    }
  });

  it('runs the go-live check against the endpoint', async () => {
    const { status, body } = await call(emulator, '/v1/webhooks/test', { body: {} });
    expect(status).toBe(200);
    expect(body.passed).toBe(true);
    expect(body.checks.map((check: { id: string }) => check.id)).toContain('tampered');
  });

  it('holds deliveries to a paused endpoint until it is resumed', async () => {
    emulator.setPaused('test', true);
    const sent = await call(emulator, '/v1/messages', { body: message });
    await until(() => emulator.state.deliveriesOf(sent.body.id)[0]?.state === 'held', {
      changes: changesOf(emulator),
    });
    expect(emulator.state.deliveriesOf(sent.body.id)[0]?.attempts).toEqual([]);
    emulator.setPaused('test', false);
    await until(() => emulator.state.deliveriesOf(sent.body.id)[0]?.state === 'acknowledged', {
      changes: changesOf(emulator),
    });
  });
});

describe('options', () => {
  it('rejects a mistake at start, naming the option', async () => {
    await expect(startEmulator({ schedule: { failureRate: 2 } })).rejects.toThrow(
      'emulator option failureRate must be a fraction from 0 to 1, got 2.',
    );
    await expect(startEmulator({ test: { endpoint: 'localhost:3000' } })).rejects.toThrow(
      'emulator option test.endpoint must be an http(s) URL',
    );
    await expect(startEmulator({ retry: { maxAttempts: 0 } })).rejects.toThrow('retry.maxAttempts');
    await expect(startEmulator({ groups: [{ id: 'grp_x', contacts: [{ phone: '0612' }] }] })).rejects.toThrow(
      'emulator data: groups.0.contacts.0.phone: Expected a phone number in international format',
    );
  });

  it('replays the same failures from the same seed', async () => {
    const failures = async () => {
      const seeded = await startEmulator({
        ...fast,
        schedule: { ...fast.schedule, failureRate: 0.5 },
        seed: 11,
      });
      try {
        for (let i = 0; i < 12; i++) await call(seeded, '/v1/messages', { body: message });
        await until(() => [...seeded.state.messages.values()].every((m) => m.events.length > 0), {
          changes: changesOf(seeded),
        });
        return [...seeded.state.messages.values()].map((m) => m.status);
      } finally {
        await seeded.close();
      }
    };
    const first = await failures();
    expect(first).toContain('failed');
    expect(first).toContain('delivered');
    expect(await failures()).toEqual(first);
  });
});

describe('modes', () => {
  it('sends a live key’s events to the live endpoint, signed with the live secret', async () => {
    const live = await startCountingReceiver();
    const twoModes = await startEmulator({
      ...fast,
      test: { endpoint: receiver.url, secret: SECRET },
      live: { endpoint: live.url, secret: 'whsec_not_the_receivers_secret_123' },
      retry: { maxAttempts: 1 },
    });
    try {
      const sent = await call(twoModes, '/v1/messages', { key: twoModes.modes.live.keys[0], body: message });
      expect(sent.body.mode).toBe('live');
      await until(() => twoModes.state.deliveriesOf(sent.body.id)[0]?.state === 'failed', {
        changes: changesOf(twoModes),
      });
      // The live receiver knows only the test secret here: the live signature is refused, as it should be.
      expect(twoModes.state.deliveriesOf(sent.body.id)[0]?.attempts.map((a) => a.reason)).toEqual([
        'signature_mismatch',
      ]);
      expect(live.calls.size).toBe(0);
      // A test key's message is not visible to the live key.
      const other = await call(twoModes, `/v1/messages/${sent.body.id}`);
      expect(other.status).toBe(404);
    } finally {
      await twoModes.close();
      await live.close();
    }
  });
});
