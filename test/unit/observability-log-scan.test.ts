import { readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { collectKnownSecrets, findLeakedSecrets, redactedName } from '../setup/known-secrets.js';
import { SECRET, TEST_SECRET } from '../support/unit.js';

/**
 * The suite-wide scan itself runs in test/setup/secret-scan.ts when the run ends; these tests check its
 * parts: that output is captured and that the secrets of the suite are known to it.
 */
describe('log scan of the whole suite', () => {
  const root = join(import.meta.dirname, '..', '..');

  it('knows the secrets of the fixtures, of the test sources, and their hex-encoded keys', () => {
    const known = collectKnownSecrets(root);
    const fixture = JSON.parse(readFileSync(join(root, 'test/fixtures/signatures.json'), 'utf8')) as {
      cases: { secrets?: string[]; secrets_hex?: string[] }[];
    };
    const fromFixture = fixture.cases.flatMap((c) => [...(c.secrets ?? []), ...(c.secrets_hex ?? [])]);
    expect(fromFixture.length).toBeGreaterThan(0);
    for (const secret of [...fromFixture, SECRET, TEST_SECRET]) expect(known).toContain(secret);
  });

  it('captures console, stdout/stderr and direct file-descriptor writes of this worker', () => {
    const probe = `log-scan-probe-${process.pid}-${Date.now()}`;
    console.log(probe);
    process.stderr.write(`${probe}-stderr\n`);
    writeSync(1, `${probe}-fd\n`);
    const dir = inject('logScanDir');
    const captured = readdirSync(dir)
      .map((name) => readFileSync(join(dir, name), 'utf8'))
      .join('\n');
    expect(captured).toContain(probe);
    expect(captured).toContain(`${probe}-stderr`);
    expect(captured).toContain(`${probe}-fd`);
  });

  it('captures the lines of a real pino logger given to a receiver', async () => {
    const probe = `pino-probe-${process.pid}-${Date.now()}`;
    const logger = pino();
    const receiver = createReceiver({ secrets: SECRET, logger });
    const outcome = await receiver.receive({ method: 'GET', headers: { 'x-probe': probe } });
    logger.info({ probe }, 'probe');
    logger.flush();
    const dir = inject('logScanDir');
    const captured = readdirSync(dir)
      .map((name) => readFileSync(join(dir, name), 'utf8'))
      .join('\n');
    expect(captured).toContain(`"requestId":"${outcome.requestId}"`);
    expect(captured).toContain(probe);
  });

  it('finds a secret anywhere in the text and names it without revealing it', () => {
    const secrets = ['whsec_aaaaaaaaaaaa', 'whsec_bbbbbbbbbbbb'];
    expect(findLeakedSecrets('{"msg":"x whsec_bbbbbbbbbbbb y"}', secrets)).toEqual(['whsec_bbbbbbbbbbbb']);
    expect(findLeakedSecrets('nothing here', secrets)).toEqual([]);
    expect(redactedName('whsec_bbbbbbbbbbbb')).toBe('whsec_… (18 characters)');
  });
});
