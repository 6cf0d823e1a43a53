import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { root } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { ownRedisServer } from '../support/harness/processes.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { tsc } from '../support/tsc.js';
import { type DocBlock, docBlocks, docFiles, documentedTsconfig, fences } from './doc-blocks.js';

/**
 * The code blocks of the README and the guides, as a user copies them into an app that installed the packed
 * package: every TypeScript and JavaScript block type-checks as written (nothing hidden above it, no path
 * aliases), the servers they show answer a signed event, and their tests pass under vitest.
 */
const SECRET = 'whsec_docs_doc_test_4b1d';
const docs = docFiles();
const blocks = docs.flatMap((doc) => docBlocks(doc));
const compiled = blocks.filter((block) => !block.fragmentOf);
/** A few one-runtime fragments (Bun, Deno) are fine; more means the guides stopped showing whole files. */
const MAX_FRAGMENTS = 4;
/**
 * The blocks of apps a framework's bundler builds (Next.js, React Router, SvelteKit, Astro, Nuxt, Vercel and
 * Netlify functions, and the vitest test of the Next route): checked under bundler resolution only.
 */
const BUNDLED = [
  'app',
  'pages',
  'lib',
  'src/routes',
  'src/pages',
  'server/api',
  'api',
  'netlify',
  'test/webhooks.test.ts',
];

const extension = (block: DocBlock) => (block.language === 'ts' ? '.ts' : '.mjs');
const pathOf = (block: DocBlock) =>
  block.file ?? `blocks/${block.doc.replace(/\W+/g, '-')}-${block.line}${extension(block)}`;

let consumer: Consumer;
/** Doc app file → where its first line is in the docs. */
const origins = new Map<string, DocBlock>();

beforeAll(async () => {
  consumer = await installPackedPackage();
  for (const block of compiled) {
    const file = join(consumer.dir, pathOf(block));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${block.code}\n`);
    origins.set(pathOf(block), block);
  }
  // The app's tsconfig.json is the one docs/typescript.md gives, checking the JavaScript blocks too. Bundled
  // apps keep their framework's bundler resolution (tsconfig.bundler.json), as that guide says; every block is
  // checked under it as well.
  const { compilerOptions } = documentedTsconfig();
  const checked = { ...compilerOptions, allowJs: true, checkJs: true, noEmit: true };
  writeFileSync(
    join(consumer.dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: checked,
      include: ['**/*.ts', '**/*.mjs'],
      exclude: ['node_modules', ...BUNDLED],
    }),
  );
  writeFileSync(
    join(consumer.dir, 'tsconfig.bundler.json'),
    JSON.stringify({
      compilerOptions: { ...checked, module: 'preserve', moduleResolution: 'bundler' },
      include: ['**/*.ts', '**/*.mjs'],
      exclude: ['node_modules'],
    }),
  );
}, 180_000);
afterAll(() => consumer?.remove());

/** A block's file with its own imports (./queue.ts) bundled in, the packages left to the app's node_modules. */
async function bundled(block: DocBlock): Promise<string> {
  const file = join(consumer.dir, pathOf(block).replace(/\.ts$/, '.run.mjs'));
  await build({
    entryPoints: [join(consumer.dir, pathOf(block))],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    outfile: file,
    logLevel: 'silent',
  });
  return file;
}

/** `blocks/docs-stores-md-12.ts(3,5): error …` → `docs/stores.md:14:5: error …` */
function toDocLine(diagnostic: string): string {
  const match = diagnostic.match(/^(.+?)\((\d+),(\d+)\): (.*)$/);
  const block = match && origins.get(match[1] as string);
  if (!match || !block) return diagnostic;
  return `${block.doc}:${block.line + Number(match[2]) - 1}:${match[3]}: ${match[4]}`;
}

describe('the README is the front door', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('is short, with a table of contents, the quick start commands and the test command', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(330);
    expect(readme).toMatch(/^## Contents$/m);
    expect(readme).toContain('npm install && npm run example');
    expect(readme).toContain('npx messaging-webhooks send');
    expect(readme).toContain('npm test');
  });

  it('links only to files and headings that exist', () => {
    const broken = docs.flatMap((doc) => {
      const text = readFileSync(join(root, doc), 'utf8');
      return [...text.matchAll(/\]\(((?!https?:|mailto:)[^)#\s]*)(?:#([^)\s]*))?\)/g)]
        .filter(([, path = '', anchor]) => {
          const target = path === '' ? join(root, doc) : join(root, dirname(doc), path);
          if (!existsSync(target)) return true;
          return anchor !== undefined && target.endsWith('.md') && !headingSlugs(target).has(anchor);
        })
        .map((match) => `${doc}: ${match[0]}`);
    });
    expect(broken).toEqual([]);
  });
});

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingSlugs(file: string): Set<string> {
  const headings = readFileSync(file, 'utf8').match(/^#{1,6} .*$/gm) ?? [];
  return new Set(
    headings.map((heading) =>
      heading
        .replace(/^#+ /, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('the code blocks of the README and docs/', () => {
  it('has code blocks in every guide', () => {
    expect(blocks.length).toBeGreaterThan(30);
    for (const doc of docs.filter((name) => name.startsWith('docs/'))) {
      expect(fences(doc).length, `${doc} has no code block`).toBeGreaterThan(0);
    }
  });

  it('every block names its language, so a reader and this test know what it is', () => {
    const bare = docs.flatMap((doc) => fences(doc).filter((fence) => fence.language === ''));
    expect(bare.map((fence) => `${fence.doc}:${fence.line - 1}`)).toEqual([]);
  });

  it('no block assumes a name it does not import or define (no ambient declarations)', () => {
    const declaring = compiled.filter((block) =>
      /^\s*declare\s+(const|let|var|function|global|module)\b/m.test(block.code),
    );
    expect(declaring.map((block) => `${block.doc}:${block.line}`)).toEqual([]);
  });

  it('the few fragments say so on their first line and name the tested example that has them whole', () => {
    const fragments = blocks.filter((block) => block.fragmentOf);
    expect(fragments.length).toBeLessThanOrEqual(MAX_FRAGMENTS);
    for (const block of fragments) {
      expect(existsSync(join(root, block.fragmentOf as string)), `${block.doc}:${block.line}`).toBe(true);
    }
  });

  it('a block placed at a path is introduced by that path, and no two blocks claim one path', () => {
    const placed = compiled.filter((block) => block.file);
    for (const block of placed) {
      expect(block.before, `${block.doc}:${block.line} is ${block.file}`).toContain(block.file as string);
    }
    const paths = placed.map((block) => block.file);
    expect(paths.filter((path, i) => paths.indexOf(path) !== i)).toEqual([]);
  });

  it.each([
    ['the tsconfig.json of docs/typescript.md (nodenext)', 'tsconfig.json'],
    ['bundler resolution, as a bundled app has', 'tsconfig.bundler.json'],
  ])(
    'every TypeScript and JavaScript block type-checks against the packed package, as written, under %s',
    async (_name, config) => {
      const { output } = await tsc(consumer.dir, config);
      const errors = output.split('\n').filter((line) => line.includes('error TS'));
      expect(errors.map(toDocLine)).toEqual([]);
    },
    180_000,
  );

  const servers = compiled.filter((block) => block.run === 'server');
  it.each(servers.map((block) => [`${block.doc}:${block.line}`, block] as const))(
    'the server of the block at %s answers a signed event 200 and a wrong secret 401',
    async (_where, block) => {
      const { code } = await transform(block.code, { loader: block.language, format: 'esm' });
      const file = join(consumer.dir, pathOf(block).replace(/\.ts$/, '.run.mjs'));
      writeFileSync(file, code);
      const server = start(
        [process.execPath, '--import', join(root, 'test/docs/listen-on-port-zero.mjs'), file],
        { WEBHOOK_SECRET: SECRET },
        consumer.dir,
      );
      try {
        const [, port] = await server.waitFor(/doc-test listening on (\d+)/, 30_000);
        const event = createEvent('message.delivered');
        const signed = createSignedRequest(event, { secret: SECRET });
        const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: signed.headers,
          body: signed.body,
        });
        expect({ status: response.status, body: await response.text() }).toEqual({
          status: 200,
          body: '{"received":true}',
        });
        await server.waitFor(new RegExp(event.data.message_id));
        // A wrong secret is refused, and the README's server says so where its reader looks: its own output.
        const forged = createSignedRequest(event, { secret: 'whsec_docs_wrong_secret_9e2a' });
        const refused = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: forged.headers,
          body: forged.body,
        });
        expect(refused.status).toBe(401);
        if (block.doc === 'README.md') await server.waitFor(/401 signature_mismatch/, 5000);
      } finally {
        await server.stop();
      }
    },
    60_000,
  );

  const workers = compiled.filter((block) => block.run === 'worker');
  it.each(workers.map((block) => [`${block.doc}:${block.line}`, block] as const))(
    'the worker of the block at %s exits by itself on SIGTERM',
    async (_where, block) => {
      const file = await bundled(block);
      const redis = await ownRedisServer();
      const worker = start(
        [process.execPath, '--import', join(root, 'test/docs/listen-on-port-zero.mjs'), file],
        { WEBHOOK_SECRET: SECRET, REDIS_URL: redis.url },
        consumer.dir,
      );
      try {
        await worker.waitFor(/worker running/i, 30_000);
        // A worker that listens serves its Prometheus metrics: they must be there, as Prometheus scrapes them.
        if (/\.listen\(/.test(block.code)) {
          const [, port] = await worker.waitFor(/doc-test listening on (\d+)/);
          const response = await fetch(`http://127.0.0.1:${port}/metrics`);
          expect(response.status).toBe(200);
          expect(await response.text()).toMatch(/^# TYPE messaging_webhooks_worker_jobs_total counter$/m);
        }
        worker.child.kill('SIGTERM');
        // A deadline, not a wait: the exit is awaited, and a worker still running at 15 s fails the case.
        let deadline: ReturnType<typeof setTimeout> | undefined;
        const [code] = (await Promise.race([
          once(worker.child, 'exit'),
          new Promise((resolve) => {
            deadline = setTimeout(resolve, 15_000, ['still running 15 s after SIGTERM']);
          }),
        ])) as [number | string | null];
        clearTimeout(deadline);
        expect(code, worker.output()).toBe(0);
      } finally {
        await worker.stop();
        await redis.remove();
      }
    },
    60_000,
  );

  const scripts = compiled.filter((block) => block.run === 'script');
  it.each(scripts.map((block) => [`${block.doc}:${block.line}`, block] as const))(
    'the script of the block at %s runs to its end without the webhook secret',
    async (_where, block) => {
      const file = await bundled(block);
      const redis = await ownRedisServer();
      // start() leaves WEBHOOK_SECRET out of the child's environment unless it is given.
      const script = start([process.execPath, file], { REDIS_URL: redis.url }, consumer.dir);
      try {
        expect(await script.exited, script.output()).toBe(0);
      } finally {
        await script.stop();
        await redis.remove();
      }
    },
    60_000,
  );

  const tests = compiled.filter((block) => block.run === 'vitest');
  it.runIf(tests.length > 0)(
    'the testing kit blocks pass under vitest',
    async () => {
      // vitest's defaults, as in a new app: an empty config of the app's own, so the repository's one (this
      // app is made inside the repository) is not found above it.
      writeFileSync(join(consumer.dir, 'vitest.config.mjs'), 'export default {};\n');
      const child = spawn(
        process.execPath,
        [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', '.', ...tests.map(pathOf)],
        {
          cwd: consumer.dir,
          env: { ...process.env, WEBHOOK_SECRET: SECRET, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, output).toBe(0);
      expect(output).toMatch(new RegExp(`Test Files\\s+${tests.length} passed`));
    },
    120_000,
  );
});
