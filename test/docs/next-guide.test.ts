import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNext, type StartedNext, startNext } from '../adapters/next-server.js';
import { root } from '../support/build.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { docBlocks } from './doc-blocks.js';

/**
 * The Next.js guide followed as a new user does after `create-next-app` (which downloads, so it is not run
 * here): its three files at their paths in an app with the tsconfig.json create-next-app 16.4 writes and the packed
 * package, built by `next build` (which type-checks them), served by `next start` with the secret, and sent an
 * event with the guide's `npx messaging-webhooks send`. Next and React resolve from the repository's
 * node_modules, the current major (the older majors run in test/consumers/next-majors.test.ts). `next start`
 * stands in for the guide's `npm run dev`. CI runs it on its first run only (CI_REPEAT_RUN=1 on the others): it
 * checks the guide, which does not change with Node, and costs a `next build`.
 */
const GUIDE_FILES = ['lib/webhooks.ts', 'app/api/webhooks/route.ts', 'pages/api/webhooks-pages.ts'];
const SECRET = 'whsec_next_guide_secret';
const nextBin = join(root, 'node_modules/next/dist/bin/next');

const { WEBHOOK_SECRET: _outerSecret, ...outerEnv } = process.env;
const env = { ...outerEnv, NEXT_TELEMETRY_DISABLED: '1' };
let consumer: Consumer | undefined;
let started: StartedNext | undefined;

const repeatRun = process.env.CI_REPEAT_RUN === '1';

beforeAll(async () => {
  if (repeatRun) return;
  const guide = readFileSync(join(root, 'docs/frameworks.md'), 'utf8');
  const section = guide.indexOf('\n## Next.js\n');
  const sectionLine = guide.slice(0, section).split('\n').length;
  const blocks = docBlocks('docs/frameworks.md').filter(
    (block) => block.line > sectionLine && block.file !== undefined && GUIDE_FILES.includes(block.file),
  );
  expect(blocks.map((block) => block.file).sort()).toEqual([...GUIDE_FILES].sort());
  consumer = await installPackedPackage();
  for (const block of blocks) {
    const file = join(consumer.dir, block.file as string);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, block.code);
  }
  copyFileSync(join(root, 'test/docs/next-guide/tsconfig.json'), join(consumer.dir, 'tsconfig.json'));
  // create-next-app's package.json has no "type"; its next.config.ts is empty. This one names the repository
  // as the root, where next, react and typescript are installed.
  writeFileSync(join(consumer.dir, 'package.json'), JSON.stringify({ name: 'my-app', private: true }));
  writeFileSync(
    join(consumer.dir, 'next.config.mjs'),
    `export default { turbopack: { root: ${JSON.stringify(root)} }, outputFileTracingRoot: ${JSON.stringify(root)} };\n`,
  );
  const app = { cwd: consumer.dir, next: nextBin, app: '.' };
  await buildNext(app, env);
  started = await startNext(app, { ...env, WEBHOOK_SECRET: SECRET });
}, 240_000);

afterAll(async () => {
  await started?.stop();
  consumer?.remove();
});

describe.skipIf(repeatRun)('the Next.js guide, after create-next-app', () => {
  it.each(['/api/webhooks', '/api/webhooks-pages'])(
    'builds, and `npx messaging-webhooks send` to %s prints 200 and {"received": true}',
    (path) => {
      const send = spawnSync(
        process.execPath,
        [
          join(consumer?.dir ?? '', 'node_modules/.bin/messaging-webhooks'),
          'send',
          `${started?.base}${path}`,
        ],
        { cwd: consumer?.dir, env: { ...env, WEBHOOK_SECRET: SECRET, NO_COLOR: '1' }, encoding: 'utf8' },
      );
      expect(send.stderr).toBe('');
      expect(send.stdout).toMatch(/^200 in /m);
      expect(send.stdout).toMatch(/"received": true/);
      expect(send.status).toBe(0);
    },
    30_000,
  );
});
