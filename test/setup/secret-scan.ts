import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { collectKnownSecrets, findLeakedSecrets, redactedName } from './known-secrets.js';

/**
 * Global setup: gives the workers a directory for their captured output (log-capture.ts) and, when the
 * whole run is over, fails it if any known test secret appears in what any test wrote or logged.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'messaging-webhooks-log-scan-'));
  project.provide('logScanDir', dir);
  return () => {
    const secrets = collectKnownSecrets(project.config.root);
    const leaks: string[] = [];
    for (const name of readdirSync(dir)) {
      const text = readFileSync(join(dir, name), 'utf8');
      for (const secret of findLeakedSecrets(text, secrets)) leaks.push(`${redactedName(secret)} in ${name}`);
    }
    if (process.env.MESSAGING_WEBHOOKS_KEEP_LOG_SCAN) console.info(`log scan kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    if (leaks.length > 0) {
      // Vitest only prints an error thrown here ("error during close"): the exit code is what fails CI.
      process.exitCode = 1;
      throw new Error(
        `A test secret appeared in the output or logs of the test run (${leaks.join('; ')}). ` +
          'Find what logged it: secrets, signatures and bodies must never be logged. ' +
          'Set MESSAGING_WEBHOOKS_KEEP_LOG_SCAN=1 to keep the captured output.',
      );
    }
  };
}
