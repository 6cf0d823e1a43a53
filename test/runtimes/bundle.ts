import { join } from 'node:path';
import { build } from 'esbuild';
import { root } from '../support/build.js';

const appDir = join(root, 'test/runtimes/app');

/**
 * Compiles a runtime entry (TypeScript) into one ES module inside the consumer app. The package and the
 * frameworks stay imports, so the runtime itself resolves `messaging-webhooks/fetch` from the installed
 * tarball, through its exports, as it would in a user's app.
 */
export async function compileEntry(consumerDir: string, entry: string): Promise<string> {
  const outfile = join(consumerDir, `${entry}.mjs`);
  await build({
    entryPoints: [join(appDir, `${entry}.ts`)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external: ['messaging-webhooks', 'messaging-webhooks/*', 'hono', 'hono/*', '@hono/node-server'],
    logLevel: 'silent',
  });
  return outfile;
}

/** What wrangler does for a Worker: one bundle of the app and the installed package, Worker conditions first. */
export async function bundleWorker(consumerDir: string): Promise<string> {
  const compiled = await compileEntry(consumerDir, 'worker');
  const outfile = join(consumerDir, 'worker.bundle.mjs');
  await build({
    entryPoints: [compiled],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  return outfile;
}
