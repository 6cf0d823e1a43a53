import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, root } from './build.js';
import { isolatedBase } from './packed-package.js';

export interface CachedConsumer {
  dir: string;
  /** The output of the `npm install` that made the folder: empty when it came from the cache. */
  installOutput: string;
}

/** The package's own manifest fields an install depends on: a change to them installs the app again. */
function installedShape(): unknown {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  return [manifest.dependencies, manifest.peerDependencies, manifest.peerDependenciesMeta];
}

/** The packed package, as `npm pack` makes it, in `dir`: returns the tarball's path. */
function pack(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const old of readdirSync(dir)) rmSync(join(dir, old), { force: true });
  // ensureBuilt just built dist/: the prepack script would build it again, racing other test files' packs.
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], {
    cwd: root,
    stdio: 'pipe',
  });
  return join(dir, readdirSync(dir)[0] as string);
}

/**
 * An app outside the repository (it sees only its own node_modules) with `dependencies` and the packed
 * package installed by a plain `npm install`, as a user's app on those versions would have them. The install
 * is kept in a folder named by what it installed, so the next run (CI runs the suite on three Node lines)
 * reuses it: then only the package itself is replaced by a fresh `npm pack`, unpacked where npm put it.
 */
export async function cachedConsumer(
  name: string,
  dependencies: Record<string, string>,
): Promise<CachedConsumer> {
  await ensureBuilt();
  const key = createHash('sha256')
    .update(JSON.stringify([dependencies, installedShape()]))
    .digest('hex')
    .slice(0, 16);
  const dir = join(isolatedBase(), 'messaging-webhooks-consumers', `${name}-${key}`);
  const installed = join(dir, 'node_modules/messaging-webhooks');
  const tarball = pack(join(dir, '.pack'));
  if (existsSync(join(dir, '.installed'))) {
    rmSync(installed, { recursive: true, force: true });
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    return { dir, installOutput: '' };
  }
  // A stable tarball name, so the manifest (and the lockfile npm writes) is the same on every run.
  renameSync(tarball, join(dir, '.pack/messaging-webhooks.tgz'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: `${name}-app`,
      private: true,
      type: 'module',
      dependencies: { ...dependencies, 'messaging-webhooks': 'file:.pack/messaging-webhooks.tgz' },
    }),
  );
  const install = spawnSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=warn'],
    { cwd: dir, encoding: 'utf8', timeout: 400_000 },
  );
  const installOutput = `${install.stdout}${install.stderr}`;
  if (install.status !== 0) {
    throw new Error(`npm install in ${dir} exited with ${install.status}:\n${installOutput.slice(-4000)}`);
  }
  writeFileSync(join(dir, '.installed'), '');
  return { dir, installOutput };
}
