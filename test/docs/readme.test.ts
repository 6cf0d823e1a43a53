import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, createSignedRequest } from '../../src/testing.js';
import { root } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { tsc } from '../support/tsc.js';
import { preludes } from './preludes.js';
import { type ReadmeBlock, readmeBlocks } from './readme-blocks.js';

/**
 * The README's TypeScript blocks, as a user copies them into an app that installed the packed package:
 * every block type-checks, the servers it shows answer a signed event, and its tests pass under vitest.
 */
const SECRET = 'whsec_readme_doc_test_4b1d';
const blocks = readmeBlocks();
const pathOf = (block: ReadmeBlock) => block.file ?? `readme/block-${block.line}.ts`;
const preludeOf = (block: ReadmeBlock) =>
  block.preludes.map((name) => {
    const prelude = preludes[name];
    if (prelude === undefined) throw new Error(`README.md:${block.line}: no doc-test prelude named ${name}`);
    return prelude;
  });

let consumer: Consumer;
/** Doc app file → README line of its first line (its prelude lines come before that). */
const origins = new Map<string, { line: number; preludeLines: number }>();

beforeAll(async () => {
  consumer = await installPackedPackage();
  for (const block of blocks) {
    const prelude = preludeOf(block);
    const preludeLines = prelude.join('\n').split('\n').filter(Boolean).length;
    const file = join(consumer.dir, pathOf(block));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, [...prelude, block.code, 'export {};', ''].join('\n'));
    origins.set(pathOf(block), { line: block.line, preludeLines });
  }
  writeFileSync(
    join(consumer.dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2023', 'DOM'],
        types: ['node'],
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        paths: { '@/*': ['./*'] },
      },
      include: ['**/*.ts'],
      exclude: ['node_modules'],
    }),
  );
}, 180_000);
afterAll(() => consumer?.remove());

/** `readme/block-12.ts(3,5): error …` → `README.md:14:5: error …` */
function toReadmeLine(diagnostic: string): string {
  const match = diagnostic.match(/^(.+?)\((\d+),(\d+)\): (.*)$/);
  const origin = match && origins.get(match[1] as string);
  if (!match || !origin) return diagnostic;
  const line = origin.line + Number(match[2]) - 1 - origin.preludeLines;
  return `README.md:${line}:${match[3]}: ${match[4]}`;
}

describe('README', () => {
  it('has TypeScript blocks to check', () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it('every TypeScript block type-checks against the packed package', async () => {
    const { output } = await tsc(consumer.dir);
    const errors = output.split('\n').filter((line) => line.includes('error TS'));
    expect(errors.map(toReadmeLine)).toEqual([]);
  }, 120_000);

  const servers = blocks.filter((block) => block.run === 'server');
  it.each(servers.map((block) => [block.line, block] as const))(
    'the server of the block at README.md:%i answers a signed event 200',
    async (_line, block) => {
      const { code } = await transform([...preludeOf(block), block.code].join('\n'), {
        loader: 'ts',
        format: 'esm',
      });
      const file = join(consumer.dir, pathOf(block).replace(/\.ts$/, '.mjs'));
      writeFileSync(file, code);
      const server = start(
        [process.execPath, '--import', join(root, 'test/docs/free-port.mjs'), file],
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
      } finally {
        await server.stop();
      }
    },
    60_000,
  );

  const tests = blocks.filter((block) => block.run === 'vitest');
  it.runIf(tests.length > 0)(
    'the testing kit blocks pass under vitest',
    async () => {
      writeFileSync(
        join(consumer.dir, 'vitest.config.mjs'),
        [
          "import { fileURLToPath } from 'node:url';",
          'export default {',
          "  resolve: { alias: { '@': fileURLToPath(new URL('.', import.meta.url)) } },",
          `  test: { include: ${JSON.stringify(tests.map(pathOf))} },`,
          '};',
        ].join('\n'),
      );
      const child = spawn(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run'], {
        cwd: consumer.dir,
        env: { ...process.env, WEBHOOK_SECRET: SECRET, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
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
