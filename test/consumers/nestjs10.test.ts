import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../support/build.js';
import { isolatedBase } from '../support/packed-package.js';

/**
 * An app on NestJS 10 installs the packed package with a plain `npm install` (Nest 10 and 11 cannot share one
 * node_modules: each platform package requires its own major of @nestjs/core by name), and the module receives
 * a delivery through it over a real socket.
 */
let dir: string | undefined;
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an app on NestJS 10 (Express platform)', () => {
  it('installs the package without peer conflicts, handles a delivery, and names rawBody: true without it', async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(isolatedBase(), 'messaging-webhooks-nestjs10-'));
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
        name: 'nestjs10-app',
        private: true,
        type: 'module',
        dependencies: {
          '@nestjs/common': '^10.4.0',
          '@nestjs/core': '^10.4.0',
          '@nestjs/platform-express': '^10.4.0',
          'reflect-metadata': '^0.2.0',
          rxjs: '^7.8.0',
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
    expect(output).not.toMatch(/ERESOLVE|peer dep/i);
    expect(install.status, output).toBe(0);
    copyFileSync(join(root, 'test/consumers/nestjs10/app.mjs'), join(dir, 'app.mjs'));
    const run = spawnSync(process.execPath, ['app.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    const seen = JSON.parse(run.stdout);
    expect(seen.nestVersion).toMatch(/^10\./);
    expect(seen.withRawBody).toEqual({ status: 200, body: { received: true }, handled: true });
    expect(seen.withoutRawBody.status).toBe(500);
    expect(seen.withoutRawBody.body.error.code).toBe('body_already_parsed');
    expect(seen.withoutRawBody.body.error.message).toContain(
      'NestFactory.create(AppModule, { rawBody: true })',
    );
    expect(seen.withoutRawBody.handled).toBe(false);
  }, 300_000);
});
