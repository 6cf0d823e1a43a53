import { beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { runCli, SECRET, startCli } from '../support/child-processes.js';
import { rawExchange } from '../support/raw-http.js';

/** The `emulate` command as shipped: the built CLI in a child process. */
beforeAll(ensureBuilt);

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
