import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import {
  type CountingReceiver,
  runCli,
  SECRET,
  startCli,
  startCountingReceiver,
  startServer,
  type TestServer,
} from '../support/child-processes.js';

beforeAll(ensureBuilt, 180_000);

const CHECKS = [
  'valid',
  'duplicate',
  'tampered',
  'stale',
  'future',
  'missing-header',
  'wrong-secret',
  'content-type',
];

interface CheckReport {
  url: string;
  passed: boolean;
  checks: {
    id: string;
    passed: boolean;
    status: number;
    reason?: string;
    duplicate?: boolean;
    detail: string;
  }[];
}

async function checkJson(
  url: string,
  secret = SECRET,
): Promise<{ code: number | null; report: CheckReport }> {
  const result = await runCli(['check', url, '--secret', secret, '--json']);
  expect(result.stderr).toBe('');
  return { code: result.code, report: JSON.parse(result.stdout) as CheckReport };
}

describe('check against correct receivers', () => {
  let receiver: CountingReceiver;
  beforeAll(async () => {
    receiver = await startCountingReceiver();
  });
  afterAll(() => receiver.close());

  it('passes every check against the node adapter, with the reason codes the receiver gave', async () => {
    const { code, report } = await checkJson(receiver.url);
    expect(code).toBe(0);
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => c.id)).toEqual(CHECKS);
    const byId = Object.fromEntries(report.checks.map((c) => [c.id, c]));
    expect(byId.valid).toMatchObject({ passed: true, status: 200 });
    expect(byId.duplicate).toMatchObject({ passed: true, status: 200, duplicate: true });
    expect(byId.tampered).toMatchObject({ status: 401, reason: 'signature_mismatch' });
    expect(byId.stale).toMatchObject({ status: 401, reason: 'stale_timestamp' });
    expect(byId.future).toMatchObject({ status: 401, reason: 'future_timestamp' });
    expect(byId['missing-header']).toMatchObject({ status: 401, reason: 'missing_signature' });
    expect(byId['wrong-secret']).toMatchObject({ status: 401, reason: 'signature_mismatch' });
    expect(byId['content-type']).toMatchObject({ status: 415, reason: 'unsupported_media_type' });
    // Processed once: the valid event ran its handler once although it was delivered twice.
    expect([...receiver.runs.values()]).toEqual([1]);
  });

  it('prints a pass/fail table for people', async () => {
    const result = await runCli(['check', receiver.url, '--secret', SECRET]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^result\s+check\s+expects\s+got\s+time\s+detail$/m);
    for (const id of CHECKS) expect(result.stdout).toMatch(new RegExp(`^PASS\\s+${id}\\s`, 'm'));
    expect(result.stdout).toContain('401 stale_timestamp');
    expect(result.stdout).toContain('All 8 checks passed');
    expect(result.stdout).not.toContain(SECRET);
    expect(result.stdout).not.toContain('\u001b[');
  });

  it("passes against the CLI's own listen", async () => {
    const listen = startCli(['listen', '--port', '0', '--secret', SECRET]);
    try {
      const [, url] = await listen.waitFor(/Listening on (http:\/\/\S+)/);
      const { code, report } = await checkJson(`${url}webhooks`);
      expect(report.checks.filter((c) => !c.passed)).toEqual([]);
      expect(code).toBe(0);
    } finally {
      expect(await listen.stop()).toBe(0);
    }
  });

  it('--header: checks an endpoint that reads another signature header', async () => {
    const custom = await startCountingReceiver({ signatureHeader: 'X-Messaging-Signature' });
    try {
      const result = await runCli([
        'check',
        custom.url,
        '--secret',
        SECRET,
        '--header',
        'X-Messaging-Signature',
      ]);
      expect(result.code).toBe(0);
      const wrongHeader = await runCli(['check', custom.url, '--secret', SECRET, '--json']);
      expect(wrongHeader.code).toBe(1);
      const report = JSON.parse(wrongHeader.stdout) as CheckReport;
      expect(report.checks[0]).toMatchObject({ id: 'valid', passed: false, reason: 'missing_signature' });
    } finally {
      await custom.close();
    }
  });

  it('fails the valid check on a wrong secret, naming it', async () => {
    const { code, report } = await checkJson(receiver.url, 'whsec_not_the_endpoints');
    expect(code).toBe(1);
    expect(report.checks.find((c) => c.id === 'valid')).toMatchObject({ passed: false, status: 401 });
  });
});

describe('check against wrong endpoints', () => {
  const servers: TestServer[] = [];
  afterAll(() => Promise.all(servers.map((server) => server.close())));

  it('fails, naming the failed checks, against an endpoint that answers 200 to everything', async () => {
    const yes = await startServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    servers.push(yes);
    const { code, report } = await checkJson(yes.url);
    expect(code).toBe(1);
    const failed = report.checks.filter((c) => !c.passed).map((c) => c.id);
    expect(failed).toEqual(['tampered', 'stale', 'future', 'missing-header', 'wrong-secret', 'content-type']);
    expect(report.checks.find((c) => c.id === 'tampered')?.detail).toMatch(/accepted/);

    const text = await runCli(['check', yes.url, '--secret', SECRET]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^FAIL\s+tampered\s/m);
    expect(text.stdout).toContain(
      '6 of 8 checks failed: tampered, stale, future, missing-header, wrong-secret, content-type',
    );
  });

  it('fails every check against an endpoint that redirects, saying so', async () => {
    const redirect = await startServer((req, res) => {
      req.resume();
      res.writeHead(308, { location: '/elsewhere' }).end();
    });
    servers.push(redirect);
    const { code, report } = await checkJson(redirect.url);
    expect(code).toBe(1);
    for (const c of report.checks) {
      expect(c).toMatchObject({ passed: false, status: 308 });
      expect(c.detail).toMatch(/redirected to \/elsewhere/);
    }
  });

  it('fails when the endpoint answers 5xx to forged deliveries', async () => {
    const broken = await startServer((req, res) => {
      req.resume();
      res.writeHead(500).end();
    });
    servers.push(broken);
    const { code, report } = await checkJson(broken.url);
    expect(code).toBe(1);
    expect(report.checks.every((c) => !c.passed)).toBe(true);
  });
});
