import { accessSync, constants, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/index.js';
import { createEvent } from '../../src/testing.js';
import { cliPath, ensureBuilt } from '../support/build.js';
import { type CountingReceiver, runCli, SECRET, startCountingReceiver } from '../support/child-processes.js';

beforeAll(ensureBuilt, 180_000);

describe('messaging-webhooks CLI: help and usage mistakes', () => {
  it('has a shebang and is executable after the build', () => {
    expect(() => accessSync(cliPath, constants.X_OK)).not.toThrow();
  });

  it('prints help for the top level and every command, exit 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    for (const name of ['sign', 'send', 'check', 'simulate', 'listen']) expect(top.stdout).toContain(name);
    const commands = ['sign', 'send', 'check', 'simulate', 'listen'];
    const results = await Promise.all(commands.map((name) => runCli([name, '--help'])));
    results.forEach((result, i) => {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: messaging-webhooks ${commands[i]}`);
      expect(result.stdout).toContain('--secret');
    });
  });

  const url = 'http://127.0.0.1:9/';
  it.each([
    { mistake: 'unknown command', args: ['frobnicate'], message: /unknown command 'frobnicate'.*--help/ },
    {
      mistake: 'unknown option',
      args: ['check', url, '--secret', SECRET, '--bogus'],
      message: /check: Unknown option '--bogus'\. Run .*check --help/,
    },
    {
      mistake: 'missing --secret',
      args: ['check', url],
      message: /check: no secret\. Pass --secret .* or set WEBHOOK_SECRET/,
    },
    { mistake: 'missing URL', args: ['send', '--secret', SECRET], message: /send: no URL/ },
    { mistake: 'not a URL', args: ['send', 'not-a-url', '--secret', SECRET], message: /not a URL/ },
    {
      mistake: 'bad --data',
      args: ['send', url, '--secret', SECRET, '--data', '{nope'],
      message: /--data is not valid JSON/,
    },
    { mistake: 'missing --events', args: ['simulate', url, '--secret', SECRET], message: /Pass --events N/ },
    {
      mistake: 'bad --duplicates',
      args: ['simulate', url, '--secret', SECRET, '--events', '10', '--duplicates', '2'],
      message: /--duplicates must be a fraction/,
    },
    {
      mistake: 'bad --port',
      args: ['listen', '--secret', SECRET, '--port', 'x'],
      message: /--port must be a whole number/,
    },
    {
      mistake: 'a timestamp in milliseconds',
      args: ['sign', '--secret', SECRET, '--timestamp', '1764337000123'],
      message:
        /--timestamp is in unix seconds, and '1764337000123' looks like milliseconds: pass 1764337000 /,
    },
    {
      mistake: 'a timestamp that is not a number',
      args: ['sign', '--secret', SECRET, '--timestamp', 'yesterday'],
      message: /--timestamp must be a whole number .* \(unix seconds, as date \+%s prints\), got 'yesterday'/,
    },
    {
      mistake: 'padded secret',
      args: ['sign', '--secret', ' padded '],
      message: /leading or trailing whitespace/,
    },
  ])('$mistake → one line that says what to do, exit 2, no stack', async ({ args, message }) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('--version prints the package version, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-v']) {
      expect(await runCli([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('no command: usage on stderr, exit 2', async () => {
    const result = await runCli([]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: messaging-webhooks <command>');
  });

  it('never prints the secret, even in a usage error', async () => {
    const secret = 'whsec_must_not_leak_0123456789';
    const result = await runCli(['check', 'ftp://x', '--secret', secret]);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('prints an error escaped: what it quotes cannot act on the terminal', async () => {
    const result = await runCli(['dead-letter', 'list', '--engine', 'x\u001b]0;owned\u0007\u009b2J']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("got 'x\\u001b]0;owned\\u0007\\u009b2J'");
  });
});

describe('sign', () => {
  it('prints a header value that verifySignature accepts for the exact stdin bytes', async () => {
    const body = `${JSON.stringify(createEvent('message.delivered', { data: { operator: 'opérateur 😀' } }))}\n`;
    const result = await runCli(['sign', '--secret', SECRET], { input: body });
    expect(result.code).toBe(0);
    const header = result.stdout.trim();
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature({ payload: body, header, secrets: SECRET })).toMatchObject({ ok: true });
    // The trailing newline is part of the signed bytes: without it the signature does not match.
    expect(verifySignature({ payload: body.trimEnd(), header, secrets: SECRET })).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('signs with --timestamp and takes the secret from WEBHOOK_SECRET', async () => {
    const result = await runCli(['sign', '--timestamp', '1700000000'], {
      input: '{}',
      env: { WEBHOOK_SECRET: SECRET },
    });
    expect(result.code).toBe(0);
    const header = result.stdout.trim();
    expect(header.startsWith('t=1700000000,')).toBe(true);
    expect(verifySignature({ payload: '{}', header, secrets: SECRET, now: 1700000000 }).ok).toBe(true);
    expect(result.stdout).not.toContain(SECRET);
  });
});

describe('send', () => {
  let receiver: CountingReceiver;
  beforeAll(async () => {
    receiver = await startCountingReceiver();
  });
  afterAll(() => receiver.close());

  it('gets 200 from a real receiver, which ran the handler with the merged data', async () => {
    const result = await runCli([
      'send',
      receiver.url,
      '--secret',
      SECRET,
      '--data',
      '{"operator":"op_cli"}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^200 in [\d.]+ ms/m);
    expect(result.stdout).toContain('"received": true');
    const [id] = result.stdout.match(/evt_[0-9A-Z]{26}/) ?? [];
    expect(receiver.runs.get(id as string)).toBe(1);
    expect(receiver.events.get(id as string)).toMatchObject({
      data: { operator: 'op_cli', to: expect.stringMatching(/^\+\d+$/) },
    });
    expect(result.stdout).not.toContain(SECRET);
  });

  it('shows the reason and exits 1 when the endpoint rejects (wrong secret)', async () => {
    const result = await runCli(['send', receiver.url, '--secret', 'whsec_another_secret']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^401 in .*signature_mismatch/m);
  });

  it('sends a type outside the catalogue with the given data', async () => {
    const result = await runCli([
      'send',
      receiver.url,
      '--secret',
      SECRET,
      '--type',
      'campaign.completed',
      '--data',
      '{"sent":3}',
    ]);
    expect(result.code).toBe(0);
    const [id] = result.stdout.match(/evt_[0-9A-Z]{26}/) ?? [];
    expect(receiver.events.get(id as string)).toMatchObject({
      type: 'campaign.completed',
      data: { sent: 3 },
    });
  });

  it('says when nothing answers, exit 1', async () => {
    const closed = await startCountingReceiver();
    await closed.close();
    const result = await runCli(['send', closed.url, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/no answer: connection refused/);
  });
});
