import { describe, expect, it } from 'vitest';
import { ensureBuilt } from './build.js';
import { runCli, SECRET, start } from './helpers.js';

/**
 * The go-live check against the repository's example servers, run as they are shipped (child processes
 * importing the built package): what a user's first `check` would meet.
 */
const examples = [
  { name: 'express', file: 'examples/express/server.mjs' },
  { name: 'fastify', file: 'examples/fastify/server.mjs' },
];

describe.each(examples)('check against the $name example', ({ file }) => {
  it('passes every check, exit 0', async () => {
    await ensureBuilt();
    const server = start([process.execPath, file], { PORT: '0', WEBHOOK_SECRET: SECRET });
    try {
      const [url] = await server.waitFor(
        /http:\/\/(localhost|127\.0\.0\.1|\[::1?\]|0\.0\.0\.0):\d+\/\S*webhooks\b/,
      );
      const result = await runCli([
        'check',
        url.replace('0.0.0.0', '127.0.0.1'),
        '--secret',
        SECRET,
        '--json',
      ]);
      const report = JSON.parse(result.stdout) as {
        passed: boolean;
        checks: { id: string; passed: boolean }[];
      };
      expect(report.checks.filter((c) => !c.passed)).toEqual([]);
      expect(report.checks).toHaveLength(8);
      expect(result.code).toBe(0);
      // The example ran the valid event's handler once and logged nothing about the secret.
      expect(server.output()).not.toContain(SECRET);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
