import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standardWebhooks } from '../../src/index.js';
import { ensureBuilt } from '../support/build.js';
import {
  type CountingReceiver,
  type Running,
  runCli,
  SECRET,
  startCli,
  startCountingReceiver,
  startServer,
} from '../support/child-processes.js';

beforeAll(ensureBuilt, 180_000);

const eventIdOf = (output: string) => output.match(/evt_[0-9A-Z]{26}/)?.[0] as string;

async function listenOn(args: string[], secret = SECRET): Promise<{ listen: Running; url: string }> {
  const listen = startCli(['listen', '--port', '0', '--secret', secret, ...args]);
  const [, base] = await listen.waitFor(/Listening on (http:\/\/\S+)/);
  return { listen, url: `${base}webhooks` };
}

describe('listen', () => {
  let downstream: CountingReceiver;
  beforeAll(async () => {
    downstream = await startCountingReceiver();
  });
  afterAll(() => downstream.close());

  it('receives a signed event from send and pretty-prints it; rejects a forged one with its reason', async () => {
    const { listen, url } = await listenOn([]);
    try {
      const sent = await runCli(['send', url, '--secret', SECRET, '--data', '{"operator":"op_listen"}']);
      expect(sent.code).toBe(0);
      const id = eventIdOf(sent.stdout);
      await listen.waitFor(/POST \/webhooks → 200/);
      const output = listen.output();
      // One secret says nothing about live or test: the line names no mode.
      expect(output).toMatch(new RegExp(`message\\.delivered ${id} \\S*req_\\w+`));
      expect(output).not.toMatch(/\blive\b/);
      expect(output).toContain('"operator": "op_listen"');

      const forged = await runCli(['send', url, '--secret', 'whsec_someone_else']);
      expect(forged.code).toBe(1);
      await listen.waitFor(/→ 401 signature_mismatch: No signature in the webhook-signature header matches/);
      expect(listen.output()).not.toContain(SECRET);
    } finally {
      expect(await listen.stop()).toBe(0);
    }
  });

  it('--forward passes the raw body and signature on to another receiver, which verifies it', async () => {
    const { listen, url } = await listenOn(['--forward', downstream.url]);
    try {
      const sent = await runCli(['send', url, '--secret', SECRET, '--data', '{"operator":"op_ünïcode 😀"}']);
      expect(sent.code).toBe(0);
      const id = eventIdOf(sent.stdout);
      expect(downstream.runs.get(id)).toBe(1);
      expect(downstream.events.get(id)).toMatchObject({ data: { operator: 'op_ünïcode 😀' } });
      await listen.waitFor(new RegExp(`forwarded to ${downstream.url.replace(/[/.]/g, '\\$&')}: 200`));
    } finally {
      await listen.stop();
    }
  });

  it('answers 500 when forwarding fails, so the sender retries; the retry is forwarded', async () => {
    let calls = 0;
    const flaky = await startServer((req, res) => {
      req.resume();
      calls++;
      res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' }).end('{}');
    });
    const { listen, url } = await listenOn(['--forward', flaky.url]);
    try {
      const first = await runCli(['simulate', url, '--secret', SECRET, '--events', '1', '--json']);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({
        attempts: 2,
        rejected: { '500 handler_failed': 1 },
        unacknowledged: 0,
      });
      expect(calls).toBe(2);
      expect(listen.output()).toMatch(/forward to .* answered 503/);
    } finally {
      await listen.stop();
      await flaky.close();
    }
  });

  it('--profile standard-webhooks: verifies that format and forwards all its headers (id, timestamp, signature)', async () => {
    const whsec = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const profiled = await startCountingReceiver({ secret: whsec, profile: standardWebhooks });
    const { listen, url } = await listenOn(
      ['--profile', 'standard-webhooks', '--forward', profiled.url],
      whsec,
    );
    try {
      expect(listen.output()).toContain(`verifying ${standardWebhooks.format}`);
      const sent = await runCli(['send', url, '--profile', 'standard-webhooks', '--secret', whsec]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = eventIdOf(sent.stdout);
      await listen.waitFor(/POST \/webhooks → 200/);
      expect(profiled.runs.get(id)).toBe(1);
      // The default format's signature is not this one's.
      const other = await runCli(['send', url, '--secret', whsec]);
      expect(other.code).toBe(1);
      await listen.waitFor(/→ 401 /);
    } finally {
      await listen.stop();
      await profiled.close();
    }
  });

  it('an unknown --profile, or a secret that is not one of its format: exit 2 naming the fix', async () => {
    const unknown = await runCli(['listen', '--port', '0', '--secret', SECRET, '--profile', 'stripe']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "listen: unknown --profile 'stripe'. Use one of: default, standard-webhooks, body-signature.",
    );
    const wrongSecret = await runCli([
      'listen',
      '--port',
      '0',
      '--secret',
      SECRET,
      '--profile',
      'standard-webhooks',
    ]);
    expect(wrongSecret.code).toBe(2);
    expect(wrongSecret.stderr).toMatch(/listen: .*is not a whsec_ secret/);
  });

  it('says when the port is taken, exit 1', async () => {
    const taken = await startServer(() => {});
    try {
      const port = new URL(taken.url).port;
      const result = await runCli(['listen', '--port', port, '--secret', SECRET]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`port ${port} is in use.*--port 0`));
    } finally {
      await taken.close();
    }
  });
});
