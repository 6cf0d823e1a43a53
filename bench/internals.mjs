// The package's internal helpers a bench times on their own (the "part" rows, the full path of verify.mjs):
// dist/ ships one bundled file per public entry, so these are bundled here from the TypeScript sources by
// esbuild (zod and every other package left external, so the schemas are the ones dist/ loads), once per run.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
// Inside the checkout, so that the bundle's imports of zod and p-queue resolve to node_modules.
const cache = join(root, 'node_modules/.cache');
mkdirSync(cache, { recursive: true });
const scratch = mkdtempSync(join(cache, 'bench-internals-'));
const outfile = join(scratch, 'internals.mjs');
await build({
  stdin: {
    contents: [
      "export { utf8Text } from './src/base/bytes.ts';",
      "export { createEventParser } from './src/pipeline/3-event.ts';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'bench-internals.ts',
    loader: 'ts',
  },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  packages: 'external',
  outfile,
  logLevel: 'warning',
});
const internals = await import(pathToFileURL(outfile).href);
rmSync(scratch, { recursive: true, force: true });

export const { utf8Text, createEventParser } = internals;
