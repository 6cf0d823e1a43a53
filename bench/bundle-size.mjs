// What a Cloudflare Worker ships: `npm run build && node bench/bundle-size.mjs`.
// Bundles bench/edge/worker.mjs (createReceiver + messaging-webhooks/fetch, default events) the way wrangler
// does (esbuild, ESM, Worker conditions first), minified, and prints its size beside the same Worker built on
// the standardwebhooks package and on stripe-node's webhooks, all in this run. The package resolves through its
// own package.json exports to dist/, as an installed copy would.
// `--check` compares the Worker with bench/bundle-budget.json (gzipped bytes; BUNDLE_BUDGET_GZIP overrides it)
// and exits 1 when it passed its budget, printing which parts grew since the breakdown in that file was recorded;
// `--record` rewrites that breakdown from this build. CI runs the check (test/runtimes/bundle-size.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const budgetFile = join(root, 'bench/bundle-budget.json');

export const WORKERS = {
  'messaging-webhooks': 'bench/edge/worker.mjs',
  standardwebhooks: 'bench/edge/standardwebhooks.mjs',
  'stripe-node webhooks': 'bench/edge/stripe.mjs',
};

/** Resolves `messaging-webhooks` and its subpaths through package.json exports, to the built files. */
const selfReference = {
  name: 'messaging-webhooks',
  setup(build) {
    const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    build.onResolve({ filter: /^messaging-webhooks(\/|$)/ }, (args) => {
      const entry = exports[`.${args.path.slice('messaging-webhooks'.length)}`];
      if (!entry) return { errors: [{ text: `${args.path} is not an export of the package` }] };
      return { path: join(root, entry.default) };
    });
  },
};

/** One Worker, bundled and minified: its bytes, gzipped bytes, and the bytes each part contributes. */
export async function bundleWorker(entry) {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [selfReference],
    outfile: 'worker.js',
  });
  const code = result.outputFiles[0].contents;
  const [output] = Object.values(result.metafile.outputs);
  const parts = {};
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const part = partOf(path);
    parts[part] = (parts[part] ?? 0) + bytesInOutput;
  }
  return { bytes: code.byteLength, gzip: gzipSync(code).byteLength, parts, inputs: output.inputs };
}

/** A file's part: a package's folder two levels deep (zod/v4/core), or this package's room (dist/src/events). */
function partOf(path) {
  const file = relative(root, join(root, path));
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + 'node_modules/'.length).split('/');
    const name = rest[0].startsWith('@') ? rest.splice(0, 2).join('/') : rest.shift();
    return [name, ...rest.slice(0, -1).slice(0, 2)].join('/');
  }
  return dirname(file);
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/** What grew since the budget's breakdown was recorded, largest growth first. */
export function growth(recorded, parts) {
  return Object.entries(parts)
    .map(([part, bytes]) => ({ part, bytes, grew: bytes - (recorded[part] ?? 0) }))
    .filter((row) => row.grew > 0)
    .sort((a, b) => b.grew - a.grew);
}

async function main() {
  const results = {};
  for (const [name, entry] of Object.entries(WORKERS)) results[name] = await bundleWorker(entry);
  console.log('Worker bundle (esbuild, minified, ESM, Worker conditions):');
  for (const [name, { bytes, gzip }] of Object.entries(results)) {
    console.log(`  ${name.padEnd(22)} ${kb(bytes).padStart(10)} minified ${kb(gzip).padStart(10)} gzip`);
  }
  const ours = results['messaging-webhooks'];
  console.log('\nmessaging-webhooks Worker, largest parts (minified bytes):');
  for (const [part, bytes] of Object.entries(ours.parts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)) {
    console.log(`  ${kb(bytes).padStart(10)}  ${part}`);
  }
  const budget = JSON.parse(readFileSync(budgetFile, 'utf8'));
  if (process.argv.includes('--record')) {
    budget.recorded = { gzip: ours.gzip, parts: ours.parts };
    writeFileSync(budgetFile, `${JSON.stringify(budget, null, 2)}\n`);
    console.log(`\nrecorded this build's breakdown in ${relative(root, budgetFile)}`);
  }
  if (process.argv.includes('--check')) {
    const allowed = Number(process.env.BUNDLE_BUDGET_GZIP ?? budget.gzipBudget);
    if (ours.gzip <= allowed) {
      console.log(`\nwithin budget: ${kb(ours.gzip)} gzip of ${kb(allowed)}`);
      return;
    }
    const grown = growth(budget.recorded.parts, ours.parts);
    const file = relative(root, budgetFile);
    console.log(`\nOVER BUDGET: ${kb(ours.gzip)} gzip, budget ${kb(allowed)}.`);
    console.log(
      grown.length === 0
        ? `Nothing grew since the breakdown in ${file} was recorded (${kb(budget.recorded.gzip)} gzip).`
        : `What grew since the breakdown in ${file} was recorded (minified bytes):`,
    );
    for (const row of grown)
      console.log(`  +${kb(row.grew).padStart(9)}  ${row.part} (now ${kb(row.bytes)})`);
    process.exitCode = 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
