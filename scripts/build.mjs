// `npm run build`: what the package ships in dist/.
// - Declarations from tsc (tsconfig.build.json, declarations only), one .d.ts per source file as the compiler
//   writes them, so the types an app compiles against are tsc's own.
// - JavaScript from esbuild: one bundled file per entry of package.json (every `exports` target and the `bin`),
//   at the path those fields name, with the code two entries share in dist/chunks/ (ESM code splitting), so an
//   app that imports the root entry and an adapter loads each piece once. Node's ESM loader pays per file
//   (resolution, read, compile): a handful of files load far faster than the ~80 modules of the tree.
// - Every other entry also loads the root entry's code (an import of src/index.ts added at its end, where it
//   moves no line of the source map): esbuild makes a chunk per set of entries that share code, and with ~20
//   entries sharing parts of the core that was ~25 files for the root entry and an adapter. With the core
//   reached from every entry, it is one chunk. An app imports the root entry anyway (createReceiver lives
//   there). The same import goes at the end of each file src/ loads with `import('./…')`: esbuild makes those
//   entries too, and the core's errors, options and deadlines they share would be chunks of their own.
// - The root entry in turn loads the adapter kit's code (src/adapter.ts, the same way): every adapter builds on
//   it, so in the core chunk it saves an app with an adapter two files (the kit and the Node readers and
//   writers) for a few KB more in an app without one. The root entry and an adapter load 3 files.
// - Every package stays external (zod, p-queue, fastify-plugin, the peers and Node's own modules): an app keeps
//   one copy of each, and an optional peer is loaded only by the entry that imports it.
// - Source maps beside each file, naming the TypeScript sources the package ships (src/, adapters/), so
//   `node --enable-source-maps` shows an app the lines of the files it has.
// The entry list is read from package.json: a new `exports` entry is bundled without touching this file.
// The build is written beside dist/ and then takes its place, so a process reading dist/ meanwhile (a test file
// that runs the built CLI while another rebuilds) never finds it half written, and no chunk of an older build
// stays behind to be packed.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('package.json', `file://${root}`), 'utf8'));

/** The built file of each entry: every `default` target of `exports` and every `bin`. */
function builtFiles() {
  const files = new Set();
  const collect = (target) => {
    if (typeof target === 'string') {
      if (target.startsWith('./dist/') && target.endsWith('.js')) files.add(target.slice(2));
    } else if (target && typeof target === 'object') {
      for (const [condition, value] of Object.entries(target)) if (condition !== 'types') collect(value);
    }
  };
  collect(manifest.exports);
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  for (const bin of bins) files.add(bin.replace(/^\.\//, ''));
  return [...files];
}

/** dist/src/index.js → { in: src/index.ts, out: src/index } (esbuild's entry form, relative to dist/). */
function entryOf(file) {
  const out = file.replace(/^dist\//, '').replace(/\.js$/, '');
  return { in: `${out}.ts`, out };
}

const ROOT_ENTRY = 'src/index.ts';
const KIT_ENTRY = 'src/adapter.ts';

/**
 * The sources a `import('./…')` of src/ loads: esbuild makes each an entry of its own, so the code they share
 * with the core would otherwise be split into small chunks every app loads beside it.
 */
function dynamicImports() {
  const found = [];
  for (const file of readdirSync(join(root, 'src'), { recursive: true })) {
    if (!file.endsWith('.ts')) continue;
    const path = join(root, 'src', file);
    for (const [, target] of readFileSync(path, 'utf8').matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)\.js'\s*\)/g))
      found.push(join(dirname(path), `${target}.ts`));
  }
  return found;
}

/** Appends an import of the root entry's source to every other entry and dynamic import (see above). */
const coreInEveryEntry = (entries) => ({
  name: 'core-in-every-entry',
  setup(build) {
    const others = new Set([
      ...entries.filter((entry) => entry.in !== ROOT_ENTRY).map((entry) => join(root, entry.in)),
      ...dynamicImports(),
    ]);
    const rootEntry = join(root, ROOT_ENTRY);
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const core = args.path === rootEntry ? KIT_ENTRY : others.has(args.path) ? ROOT_ENTRY : undefined;
      if (core === undefined) return undefined;
      const source = readFileSync(args.path, 'utf8');
      return { contents: `${source}\nimport ${JSON.stringify(join(root, core))};\n`, loader: 'ts' };
    });
  },
});

// Beside dist/, at the same depth, so the source maps' relative paths hold once it is renamed.
const stage = `.dist-build-${process.pid}`;
rmSync(join(root, stage), { recursive: true, force: true });

const tsc = spawnSync(
  process.execPath,
  [
    `${root}node_modules/typescript/bin/tsc`,
    '-p',
    'tsconfig.build.json',
    '--emitDeclarationOnly',
    '--outDir',
    stage,
  ],
  { cwd: root, stdio: 'inherit' },
);

const entries = builtFiles().map(entryOf);
await build({
  absWorkingDir: root,
  entryPoints: entries,
  plugins: [coreInEveryEntry(entries)],
  outdir: stage,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const bin of Object.values(manifest.bin ?? {}))
  chmodSync(join(root, stage, bin.replace(/^(\.\/)?dist\//, '')), 0o755);

/** dist/ replaced by the new build; what others keep in it (a test's lock directory, `.…`) is carried over. */
function swapIn() {
  const dist = join(root, 'dist');
  if (!existsSync(dist)) return renameSync(join(root, stage), dist);
  const old = join(root, `.dist-old-${process.pid}`);
  renameSync(dist, old);
  renameSync(join(root, stage), dist);
  for (const name of readdirSync(old))
    if (name.startsWith('.')) renameSync(join(old, name), join(dist, name));
  rmSync(old, { recursive: true, force: true });
}
swapIn();

// tsc's type errors fail the build once the JavaScript is written, as `tsc` alone did (it emits despite them).
process.exitCode = tsc.status ?? 1;
