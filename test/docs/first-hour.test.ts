import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/build.js';
import { start } from '../support/child-processes.js';
import { ownRedisServer, type RedisServer } from '../support/harness/processes.js';
import { type Consumer, installPackedPackage } from '../support/packed-package.js';
import { docBlocks, docFiles, fences } from './doc-blocks.js';
import { readDoc } from './doc-tables.js';

/** The commands of a doc's `sh` blocks, each line as a reader pastes it. */
function shellLines(doc: string): string[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const shell = fences(doc).filter((fence) => fence.language === 'sh');
  return shell.flatMap((fence) => {
    // fence.line is the block's first line, counted from 1.
    const first = fence.line - 1;
    const end = lines.findIndex((line, index) => index >= first && line.startsWith('```'));
    return lines.slice(first, end);
  });
}

describe('what a reader runs in the first hour', () => {
  it('until the package is on the npm registry, no command installs it by name (that answers 404)', () => {
    const byName = docFiles().flatMap((doc) =>
      shellLines(doc)
        .filter((line) => /\bnpm (install|i|add)\b[^#]*\bmessaging-webhooks(?![\w./-])/.test(line))
        .map((line) => `${doc}: ${line}`),
    );
    expect(byName).toEqual([]);
  });

  it('`npx tsc` comes after typescript is installed (before, npx offers the unrelated `tsc` package)', () => {
    for (const doc of docFiles()) {
      // The whole text: a command in a sentence is run as readily as one in a block.
      const text = readFileSync(join(root, doc), 'utf8');
      const first = text.search(/\bnpx tsc\b/);
      if (first === -1) continue;
      const installed = text.search(/\bnpm (install|i)\b[^\n`]*\btypescript\b/);
      expect(installed, `${doc}: typescript is installed before npx tsc`).toBeGreaterThanOrEqual(0);
      expect(installed, `${doc}: typescript is installed before npx tsc`).toBeLessThan(first);
    }
  });

  it('the README and the development guide name what the suite needs on the machine, the browser included', () => {
    const consoleTest = readFileSync(join(root, 'test/emulator/console.test.ts'), 'utf8');
    const browser = consoleTest.match(/const CHROMIUM = '([^']+)'/)?.[1];
    expect(browser).toBeDefined();
    for (const doc of ['README.md', 'docs/development.md']) {
      const text = readFileSync(join(root, doc), 'utf8');
      for (const needed of ['Redis', 'PostgreSQL', 'MariaDB', 'RabbitMQ', 'NATS', `\`${browser}\``])
        expect(text, doc).toContain(needed);
    }
  });

  it("the README's suite time says when and where it was measured, and that it varies", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const development = readme.slice(readme.indexOf('\n## Development'));
    expect(development).toMatch(/Measured on \d{4}-\d{2}-\d{2} on a [^.]*machine/);
    expect(development).toMatch(/depends on the machine/);
  });

  it('every package the framework guides import is in their install tables', () => {
    const page = readDoc('frameworks.md');
    const tables = page.slice(0, page.indexOf('\n## Tested on'));
    const imported = new Set(
      docBlocks('docs/frameworks.md').flatMap((block) =>
        [...block.code.matchAll(/from '([^'.][^']*)'/g)]
          .map(([, specifier = '']) =>
            specifier
              .split('/')
              .slice(0, specifier.startsWith('@') ? 2 : 1)
              .join('/'),
          )
          .filter((name) => !name.startsWith('node:') && name !== 'messaging-webhooks'),
      ),
    );
    expect([...imported].filter((name) => !tables.includes(`\`${name}\``))).toEqual([]);
  });
});

/** The workers guide's queue.ts, run against a Redis as a package manager installs it (no append-only file). */
describe("the workers guide's queue.ts on a throwaway Redis", () => {
  let consumer: Consumer;
  let redis: RedisServer;
  let script: string;
  beforeAll(async () => {
    [consumer, redis] = await Promise.all([
      installPackedPackage(),
      ownRedisServer(['--save', '', '--appendonly', 'no']),
    ]);
    const queueBlock = docBlocks('docs/workers.md').find((block) => block.file === 'queue.ts');
    writeFileSync(join(consumer.dir, 'queue.ts'), queueBlock?.code ?? '');
    writeFileSync(
      join(consumer.dir, 'try.ts'),
      [
        "import { queue, redis } from './queue.ts';",
        'try {',
        '  await queue.ready();',
        // A round trip: the queue works on that Redis (and its connection is open before it is closed).
        "  console.log('queue ready', JSON.stringify(await queue.queue.getJobCounts('wait')));",
        '} catch (error) {',
        "  console.log('refused:', error instanceof Error ? error.message : error);",
        '} finally {',
        '  await queue.close();',
        '  await redis.close();',
        '}',
      ].join('\n'),
    );
    script = join(consumer.dir, 'try.mjs');
    await build({
      entryPoints: [join(consumer.dir, 'try.ts')],
      bundle: true,
      packages: 'external',
      format: 'esm',
      platform: 'node',
      outfile: script,
      logLevel: 'silent',
    });
  }, 180_000);
  afterAll(async () => {
    await redis?.remove();
    consumer?.remove();
  });

  const run = async (env: Record<string, string>) => {
    const child = start([process.execPath, script], { REDIS_URL: redis.url, ...env }, consumer.dir);
    expect(await child.exited, child.output()).toBe(0);
    return child.output();
  };

  it('is refused by default, the refusal naming what to do', async () => {
    expect(await run({})).toMatch(/refused: .*allowVolatileRedis/);
  }, 30_000);

  it('is taken with ALLOW_VOLATILE_REDIS=1, for a local try', async () => {
    expect(await run({ ALLOW_VOLATILE_REDIS: '1' })).toContain('queue ready {"wait":0}');
  }, 30_000);
});
