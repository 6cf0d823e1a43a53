import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../support/build.js';
import { runCli, SECRET, start } from '../support/child-processes.js';

/**
 * The go-live check against the repository's example servers, run as they are shipped (child processes
 * importing the built package, each started by the command its npm script runs): what a user's first
 * `check` would meet.
 */
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const examples = [
  { name: 'express', command: [process.execPath, 'examples/express/server.mjs'] },
  { name: 'fastify', command: [process.execPath, 'examples/fastify/server.mjs'] },
  { name: 'hono (Node)', command: [process.execPath, 'examples/hono/server.mjs'] },
  { name: 'bun', command: [bin('bun'), 'examples/bun/server.mjs'] },
  {
    name: 'deno',
    command: [
      bin('deno'),
      'run',
      '--no-lock',
      '--unstable-kv',
      '--allow-net',
      '--allow-env',
      '--allow-read',
      'examples/deno/server.mjs',
    ],
  },
  { name: 'worker (workerd)', command: [process.execPath, 'examples/worker/dev.mjs'], ownReceiver: true },
];

describe.each(examples)('check against the $name example', ({ command, ownReceiver }) => {
  it('passes every check, exit 0', async () => {
    await ensureBuilt();
    const server = start(command, { PORT: '0', WEBHOOK_SECRET: SECRET });
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
      // The example ran the valid event's handler once (the duplicate was not run again) and logged
      // nothing about the secret.
      await server.waitFor(/ delivered to /);
      expect(server.output().match(/ delivered to /g)).toHaveLength(1);
      expect(server.output()).not.toContain(SECRET);
      // The forged delivery of the check is printed where the example's user looks, not only answered.
      if (!ownReceiver) expect(server.output()).toMatch(/401 signature_mismatch: No signature/);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
