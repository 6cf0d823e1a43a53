import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { root } from './build.js';

/**
 * The repository's TypeScript compiler on a consumer project (its folder, and the tsconfig file in it when not
 * tsconfig.json); its output is the diagnostics.
 */
export async function tsc(
  project: string,
  config = 'tsconfig.json',
): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(project, config)],
    {
      cwd: project,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}
