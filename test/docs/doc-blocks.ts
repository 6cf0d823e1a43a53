import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../support/build.js';

/**
 * The code blocks of README.md and every guide under docs/, as a reader copies them. A TypeScript or
 * JavaScript block is checked as written: nothing is added above it, so whatever it uses it imports or defines.
 * The line right above its fence may hold a directive, which the text around the block also tells the reader:
 * `<!-- doc-test: file=lib/webhooks.ts run=server -->`
 * - file: the path the text gives the block (other blocks import it from there); it must appear in the text
 *   just above the block, so the reader knows it too;
 * - run: `server` (started, then sent a signed event that must be answered 200), `worker` (started with a Redis
 *   of its own, then sent SIGTERM: it must exit by itself), `script` (run with a Redis of its own and no webhook
 *   secret: it must end by itself with exit code 0) or `vitest` (run as a test).
 * A block that cannot run as shown says so on its first line, which the reader sees:
 * `// Fragment: … (complete: examples/bun/server.mjs)`, naming the tested file that has it whole.
 */
export interface DocBlock {
  /** `README.md` or `docs/<guide>.md`. */
  doc: string;
  /** 1-based line of the block's first code line in its document. */
  line: number;
  language: 'ts' | 'js';
  code: string;
  file?: string;
  run?: 'server' | 'worker' | 'script' | 'vitest';
  /** The example file a fragment names as its complete version. */
  fragmentOf?: string;
  /** The prose lines just above the block (its introduction). */
  before: string;
}

/** Any fenced block, checked or not: its language is what tells a reader (and this test) what it is. */
export interface Fence {
  doc: string;
  line: number;
  language: string;
}

const DIRECTIVE = /^<!--\s*doc-test:(.*?)-->\s*$/;
const FRAGMENT = /^\/\/ Fragment\b.*\(complete: (examples\/[^)\s]+)\)/;
const CHECKED: Record<string, DocBlock['language']> = {
  ts: 'ts',
  typescript: 'ts',
  js: 'js',
  javascript: 'js',
};

export function docFiles(): string[] {
  const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...guides.sort().map((name) => `docs/${name}`)];
}

export function fences(doc: string): Fence[] {
  return scan(doc).map(({ line, language }) => ({ doc, line, language }));
}

export function docBlocks(doc: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  for (const { line, language, code, lines, start } of scan(doc)) {
    const checked = CHECKED[language];
    if (!checked) continue;
    const directive = parseDirective(doc, lines[start - 1] ?? '', start);
    const before = lines.slice(Math.max(0, start - 6), start).join('\n');
    const fragmentOf = code.split('\n')[0]?.match(FRAGMENT)?.[1];
    blocks.push({
      doc,
      line,
      language: checked,
      code,
      before,
      ...directive,
      ...(fragmentOf && { fragmentOf }),
    });
  }
  return blocks;
}

function scan(doc: string) {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const found: { line: number; language: string; code: string; lines: string[]; start: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i]?.match(/^```(\S*)\s*$/);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end === -1) throw new Error(`${doc}:${i + 1}: a code block is never closed.`);
    found.push({
      line: i + 2,
      language: fence[1] ?? '',
      code: lines.slice(i + 1, end).join('\n'),
      lines,
      start: i,
    });
    i = end;
  }
  return found;
}

function parseDirective(doc: string, line: string, index: number): Pick<DocBlock, 'file' | 'run'> {
  const match = line.match(DIRECTIVE);
  const directive: Pick<DocBlock, 'file' | 'run'> = {};
  if (!match) return directive;
  for (const pair of (match[1] as string).trim().split(/\s+/)) {
    const [key, value = ''] = pair.split('=');
    if (key === 'file') directive.file = value;
    else if (
      key === 'run' &&
      (value === 'server' || value === 'worker' || value === 'script' || value === 'vitest')
    )
      directive.run = value;
    else
      throw new Error(
        `${doc}:${index}: unknown doc-test directive ${pair} (file=PATH, run=server|worker|script|vitest)`,
      );
  }
  return directive;
}

/** The `tsconfig.json` docs/typescript.md gives a TypeScript app: its one JSON block with compilerOptions. */
export function documentedTsconfig(): { compilerOptions: Record<string, unknown> } {
  const doc = 'docs/typescript.md';
  const found = scan(doc).filter(
    (fence) => fence.language === 'json' && fence.code.includes('"compilerOptions"'),
  );
  if (found.length !== 1) throw new Error(`${doc} should have one tsconfig.json block, has ${found.length}`);
  return JSON.parse((found[0] as { code: string }).code);
}
