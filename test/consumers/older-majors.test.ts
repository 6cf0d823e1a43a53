import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../support/build.js';
import { isolatedBase } from '../support/packed-package.js';

/**
 * An app on the older framework majors installs the packed package with a plain `npm install` (no
 * --legacy-peer-deps): npm accepts Express 4 and Fastify 4 under the package's peer ranges, and warns of
 * no engine. Packages come from npm's cache when it has them (the repository's own install put them there).
 */
let dir: string | undefined;
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an app on Express 4 and Fastify 4', () => {
  it('installs the package without peer conflicts and receives a delivery through each', async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(isolatedBase(), 'messaging-webhooks-older-majors-'));
    const packDir = join(dir, '.pack');
    mkdirSync(packDir);
    execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], {
      cwd: root,
      stdio: 'pipe',
    });
    const tarball = readdirSync(packDir)[0] as string;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'older-majors-app',
        private: true,
        type: 'module',
        dependencies: {
          express: '^4.19.0',
          fastify: '^4.21.0',
          'messaging-webhooks': `file:.pack/${tarball}`,
        },
      }),
    );
    const install = spawnSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=warn'],
      { cwd: dir, encoding: 'utf8', timeout: 240_000 },
    );
    const output = `${install.stdout}${install.stderr}`;
    expect(output).not.toMatch(/ERESOLVE|peer dep|EBADENGINE/i);
    expect(install.status, output).toBe(0);
    copyFileSync(join(root, 'test/consumers/older-majors/app.mjs'), join(dir, 'app.mjs'));
    const run = spawnSync(process.execPath, ['app.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    const seen = JSON.parse(run.stdout);
    expect(seen.expressVersion).toMatch(/^4\./);
    expect(seen.fastifyVersion).toMatch(/^4\./);
    expect(seen.onExpress).toEqual({ status: 200, body: { received: true } });
    expect(seen.onFastify).toEqual({ status: 200, body: { received: true } });
  }, 300_000);
});
