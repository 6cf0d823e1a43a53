import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './until.js';

export const root = new URL('../../', import.meta.url).pathname;
export const cliPath = join(root, 'dist/src/cli/main.js');
const lock = join(root, 'dist/.cli-test-build.lock');

/** Newest modification time of the TypeScript sources the build compiles. */
function newestSource(): number {
  let newest = 0;
  for (const dir of ['src', 'adapters']) {
    for (const file of readdirSync(join(root, dir), { recursive: true })) {
      const name = String(file);
      if (name.endsWith('.ts')) newest = Math.max(newest, statSync(join(root, dir, name)).mtimeMs);
    }
  }
  return newest;
}

const fresh = () => existsSync(cliPath) && statSync(cliPath).mtimeMs >= newestSource();

/**
 * The CLI tests run the built CLI as a child process and the example servers import the package from
 * dist/: run `npm run build` when a source is newer than the build. A lock directory keeps test files
 * running in parallel from building over each other. A type error in a file under way elsewhere does not
 * stop the tests (tsc still emits); it is printed.
 */
export async function ensureBuilt(): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (!fresh()) {
    mkdirSync(join(root, 'dist'), { recursive: true });
    try {
      mkdirSync(lock);
    } catch {
      // Another file is building: wait until its lock is gone (a lock left by a crashed run goes after 3 minutes).
      const lockedAt = () => statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      const stale = () => Date.now() - (lockedAt() ?? Date.now()) > 180_000;
      await until(() => fresh() || lockedAt() === undefined || stale(), {
        timeoutMs: Math.max(deadline - Date.now(), 1),
        what: 'another test file to build dist/',
      });
      if (stale()) rmSync(lock, { recursive: true, force: true });
      continue;
    }
    try {
      const result = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
      if (result.status !== 0) {
        const errors = `${result.stdout}${result.stderr}`
          .split('\n')
          .filter((line) => line.includes('error'));
        console.warn(`npm run build failed; testing what tsc emitted:\n${errors.slice(0, 10).join('\n')}`);
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    if (!existsSync(cliPath)) throw new Error('npm run build did not emit dist/src/cli/main.js.');
    return;
  }
}
