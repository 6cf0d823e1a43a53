import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { ensureBuilt, root } from './build.js';

/** Where consumer apps are made: inside the repository, so their other imports resolve from its node_modules. */
const consumersDir = join(root, 'tmp/consumers');

/**
 * A folder for an app that must see only its own node_modules: Node and TypeScript look for packages in every
 * ancestor's node_modules too, so a folder under one (a TMPDIR inside a checkout, packages someone installed in
 * /tmp) would lend the app packages it never installed. The first of the usual temporary folders without one.
 */
export function isolatedBase(): string {
  const underNodeModules = (dir: string): boolean => {
    for (let at = dir; ; at = dirname(at)) {
      if (existsSync(join(at, 'node_modules'))) return true;
      if (at === parse(at).root) return false;
    }
  };
  const candidates = [tmpdir(), '/tmp', '/var/tmp', '/dev/shm'];
  const base = candidates.find((dir) => existsSync(dir) && !underNodeModules(dir));
  if (base === undefined) {
    throw new Error(
      `Every temporary folder (${candidates.join(', ')}) has a node_modules in it or above it; an app made there would resolve packages it did not install. Remove that node_modules or set TMPDIR to a folder without one.`,
    );
  }
  return base;
}

export interface Consumer {
  dir: string;
  remove(): void;
}

/** The package's own dependencies: what `npm install messaging-webhooks` brings along. */
export const DEPENDENCIES = ['zod', 'p-queue', 'fastify-plugin'];

/**
 * A new app with the package installed from its `npm pack` tarball, as a user's `npm install` leaves it:
 * node_modules/messaging-webhooks holds only the files the package ships, reached through its exports.
 * By default the app lives inside the repository, so its dependencies and the frameworks resolve from the
 * repository's node_modules one level up (no registry needed). With `only`, it lives outside, and its
 * node_modules holds the package and links to exactly those packages: what an app that installed only
 * them would see.
 */
export async function installPackedPackage(options: { only?: string[] } = {}): Promise<Consumer> {
  await ensureBuilt();
  mkdirSync(consumersDir, { recursive: true });
  const dir = mkdtempSync(
    options.only ? join(isolatedBase(), 'messaging-webhooks-consumer-') : join(consumersDir, 'app-'),
  );
  for (const name of options.only ?? []) {
    const link = join(dir, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), link);
  }
  const packDir = join(dir, '.pack');
  mkdirSync(packDir);
  // ensureBuilt just built dist/: the prepack script would build it again, racing other test files' packs.
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: root,
    stdio: 'pipe',
  });
  const tarball = join(packDir, readdirSync(packDir)[0] as string);
  const installed = join(dir, 'node_modules/messaging-webhooks');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  rmSync(packDir, { recursive: true });
  // The bin links npm makes, so `npx messaging-webhooks` runs the installed CLI.
  const { bin } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  mkdirSync(join(dir, 'node_modules/.bin'));
  for (const [name, file] of Object.entries(bin)) {
    symlinkSync(join('../messaging-webhooks', file), join(dir, 'node_modules/.bin', name));
  }
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }),
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
