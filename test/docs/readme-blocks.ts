import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../support/build.js';

/**
 * A TypeScript block of the README. The line right above its fence may hold a directive:
 * `<!-- doc-test: file=lib/webhooks.ts prelude=receiver run=server -->`
 * - file: where the block is written in the doc app (other blocks import it by that path);
 * - prelude: comma-separated names of the declarations a fragment assumes (see preludes.ts);
 * - run: `server` (started, then sent a signed event that must be answered 200) or `vitest` (run as a test).
 * Without one, the block is type-checked on its own, as a module.
 */
export interface ReadmeBlock {
  /** 1-based line of the block's first code line in README.md. */
  line: number;
  code: string;
  file?: string;
  preludes: string[];
  run?: 'server' | 'vitest';
}

const DIRECTIVE = /^<!--\s*doc-test:(.*?)-->\s*$/;

export function readmeBlocks(path = join(root, 'README.md')): ReadmeBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i]?.match(/^```(\w*)\s*$/);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end === -1) throw new Error(`README.md:${i + 1}: a code block is never closed.`);
    if (fence[1] === 'ts' || fence[1] === 'typescript') {
      const directive = parseDirective(lines[i - 1] ?? '', i);
      blocks.push({ line: i + 2, code: lines.slice(i + 1, end).join('\n'), ...directive });
    }
    i = end;
  }
  return blocks;
}

function parseDirective(line: string, index: number): Omit<ReadmeBlock, 'line' | 'code'> {
  const match = line.match(DIRECTIVE);
  const directive: Omit<ReadmeBlock, 'line' | 'code'> = { preludes: [] };
  if (!match) return directive;
  for (const pair of (match[1] as string).trim().split(/\s+/)) {
    const [key, value = ''] = pair.split('=');
    if (key === 'file') directive.file = value;
    else if (key === 'prelude') directive.preludes = value.split(',');
    else if (key === 'run' && (value === 'server' || value === 'vitest')) directive.run = value;
    else throw new Error(`README.md:${index}: unknown doc-test directive ${pair}`);
  }
  return directive;
}
