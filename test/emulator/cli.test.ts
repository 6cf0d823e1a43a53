import { beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { runCli, SECRET, startCli, startCountingReceiver } from '../support/child-processes.js';
import { rawExchange } from '../support/raw-http.js';

/** The `emulate` command as shipped: the built CLI in a child process. */
beforeAll(ensureBuilt);

const ACME_SECRET = 'whsec_acme_cli_4e7d1a9b3c5f2e80';

it('asks for a secret, and names a bad option value', async () => {
  const noSecret = await runCli(['emulate', '--port', '0']);
  expect(noSecret.code).toBe(2);
  expect(noSecret.stderr).toMatch(/emulate: no secret\. Pass --secret/);
  const bad = await runCli(['emulate', '--port', '0', '--copies', '3'], { env: { WEBHOOK_SECRET: SECRET } });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--copies must be a fraction from 0 to 1/);
});

it('serves the API and the console, prints keys but never the secret, stops on SIGTERM', async () => {
  const emulator = startCli(['emulate', '--port', '0', '--seed', '5'], { WEBHOOK_SECRET: SECRET });
  try {
    const [, url] = await emulator.waitFor(/emulator on (http:\/\/127\.0\.0\.1:\d+)/);
    const sent = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_test_emulator', 'content-type': 'application/json' },
      body: JSON.stringify({ to: '+15550100001', sender: 'Acme', body: 'Hi' }),
    });
    expect(sent.status).toBe(202);
    const page = await fetch(`${url}/`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain(
      '<button type="button" class="primary" id="send">Send a test message</button>',
    );
    expect(emulator.output()).toContain('seed 5');
    expect(emulator.output()).not.toContain(SECRET);
  } finally {
    expect(await emulator.stop()).toBe(0);
  }
});

it('answers the hosts named with --allowed-host, and 403 to other names', async () => {
  const emulator = startCli(['emulate', '--port', '0', '--allowed-host', 'emulator.test'], {
    WEBHOOK_SECRET: SECRET,
  });
  try {
    const [, port] = await emulator.waitFor(/emulator on http:\/\/127\.0\.0\.1:(\d+)/);
    const get = (host: string) =>
      rawExchange(Number(port), [
        `GET /console/state HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`,
      ]);
    expect((await get('emulator.test')).statuses).toEqual([200]);
    expect(await get('attacker.example')).toMatchObject({ statuses: [403], reasons: ['host_not_allowed'] });
  } finally {
    expect(await emulator.stop()).toBe(0);
  }
});

it('runs an organization per --org, each signing with its own secret; prints one line per attempt', async () => {
  const acme = await startCountingReceiver({ secret: ACME_SECRET });
  const globex = await startCountingReceiver({ secret: SECRET });
  const emulator = startCli(
    ['emulate', '--port', '0', '--submit-ms', '5', '--result-ms', '5', '--org', `acme=${acme.url}`],
    { WEBHOOK_SECRET_ACME: ACME_SECRET },
  );
  const withGlobex = startCli(
    ['emulate', '--port', '0', '--org', `acme=${acme.url}`, '--org', `globex=${globex.url}`],
    { WEBHOOK_SECRET_ACME: ACME_SECRET },
  );
  try {
    const [, url] = await emulator.waitFor(/emulator on (http:\/\/127\.0\.0\.1:\d+)/);
    await emulator.waitFor(/acme test: key sk_test_acme, webhooks to http:/);
    const sent = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_test_acme', 'content-type': 'application/json' },
      body: JSON.stringify({ to: '+15550100001', sender: 'Acme', body: 'Hi' }),
    });
    expect(sent.status).toBe(202);
    const [line, eventId] = await emulator.waitFor(
      /\d\d:\d\d:\d\d\.\d{3} {2}acme {2}test {2}message\.delivered {2}(evt_\w+) {2}→ \S+ {2}200 {2}attempt 1/,
    );
    expect(line).toContain(`→ ${acme.url}  200`);
    expect(acme.runs.get(eventId as string)).toBe(1);
    expect(emulator.output()).not.toContain(ACME_SECRET);
    // An organization without a secret is named, with the two ways to give one.
    await withGlobex.waitFor(/no secret for organization globex/);
    expect(withGlobex.output()).toContain(
      '--org-secret globex=<its signing secret> or set WEBHOOK_SECRET_GLOBEX',
    );
  } finally {
    expect(await emulator.stop()).toBe(0);
    await withGlobex.stop();
    await acme.close();
    await globex.close();
  }
});

it('refuses the single-organization options beside --org, and says how to run several in --help', async () => {
  const help = await runCli(['emulate', '--help']);
  expect(help.stdout).toMatch(/--org NAME=URL +an organization and its test webhook endpoint/);
  expect(help.stdout).toContain('--org-secret NAME=S');
  expect(help.stdout).toContain('Each webhook attempt is printed as one line');
  const mixed = await runCli(
    [
      'emulate',
      '--port',
      '0',
      '--org',
      'acme=http://localhost:3000/a',
      '--endpoint',
      'http://localhost:3000/b',
    ],
    {
      env: { WEBHOOK_SECRET_ACME: SECRET },
    },
  );
  expect(mixed.code).toBe(2);
  expect(mixed.stderr).toMatch(/--endpoint is for a single organization; with --org/);
  const stray = await runCli(
    ['emulate', '--port', '0', '--org', 'acme=http://localhost:3000/a', '--org-secret', `globex=${SECRET}`],
    {
      env: { WEBHOOK_SECRET_ACME: SECRET },
    },
  );
  expect(stray.stderr).toMatch(/--org-secret names globex, which no --org lists/);
});
