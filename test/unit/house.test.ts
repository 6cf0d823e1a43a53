import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageEntries, repoRoot } from '../support/entries.js';
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, ROOMS } from '../support/house-rules.js';

// The house rules, measured on every source file of the package (src/ and adapters/).

interface SourceFile {
  /** Relative to the repository, with forward slashes: `src/pipeline/index.ts`. */
  file: string;
  lines: number;
  /** The repository files this one imports or re-exports from. */
  imports: string[];
  /** The same, less the imports of types only (gone once compiled). */
  valueImports: string[];
  functions: { name: string; lines: number }[];
}

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((dirent) => {
    const full = path.join(dir, dirent.name);
    if (dirent.isDirectory()) return walk(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

const relative = (full: string) => path.relative(repoRoot, full).split(path.sep).join('/');

function isFunctionWithBody(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessor(node) ||
      ts.isSetAccessor(node)) &&
    node.body !== undefined
  );
}

function read(full: string): SourceFile {
  const text = fs.readFileSync(full, 'utf8');
  const source = ts.createSourceFile(full, text, ts.ScriptTarget.Latest, true);
  const imports: string[] = [];
  const valueImports: string[] = [];
  const functions: SourceFile['functions'] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      node.moduleSpecifier.text.startsWith('.')
    ) {
      const target = path.resolve(path.dirname(full), node.moduleSpecifier.text).replace(/\.js$/, '.ts');
      imports.push(relative(target));
      const typeOnly = ts.isImportDeclaration(node)
        ? node.importClause?.isTypeOnly === true
        : (node as ts.ExportDeclaration).isTypeOnly;
      if (!typeOnly) valueImports.push(relative(target));
    }
    if (isFunctionWithBody(node)) {
      // Counted from the line of the signature to the closing brace.
      const lines = lineOf(node.end) - lineOf(node.getStart()) + 1;
      functions.push({ name: node.name?.getText() ?? '(anonymous)', lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file: relative(full), lines: text.split('\n').length, imports, valueImports, functions };
}

const files = [...walk(path.join(repoRoot, 'src')), ...walk(path.join(repoRoot, 'adapters'))].map(read);
const byName = new Map(files.map((file) => [file.file, file]));

/** Every import circle, each written once as `a -> b -> a`. */
function circles(): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string) => {
    state.set(name, 'open');
    stack.push(name);
    for (const next of byName.get(name)?.imports ?? []) {
      if (!byName.has(next)) continue;
      if (state.get(next) === 'open') found.add([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const name of byName.keys()) if (!state.has(name)) visit(name);
  return [...found];
}

const importers = (matches: (file: SourceFile) => boolean, targets: (imported: string) => boolean) =>
  files
    .filter(matches)
    .flatMap((file) => file.imports.filter(targets).map((target) => `${file.file} -> ${target}`));

const roomOf = (file: string) => file.split('/')[1] ?? '';

describe('the house', () => {
  it('has no import circles', () => {
    expect(circles()).toEqual([]);
  });

  it(`keeps every file at ${MAX_FILE_LINES} lines or fewer`, () => {
    const long = files
      .filter((file) => file.lines > MAX_FILE_LINES)
      .map((file) => `${file.file}: ${file.lines}`);
    expect(long).toEqual([]);
  });

  it(`keeps every function at ${MAX_FUNCTION_LINES} lines or fewer`, () => {
    const long = files.flatMap((file) =>
      file.functions
        .filter((fn) => fn.lines > MAX_FUNCTION_LINES)
        .map((fn) => `${file.file} ${fn.name}: ${fn.lines}`),
    );
    expect(long).toEqual([]);
  });

  it('lets neither the emulator nor the sender reach into the CLI', () => {
    const outside = importers(
      (file) => file.file.startsWith('src/emulator/') || file.file.startsWith('src/sending/'),
      (imported) => imported.startsWith('src/cli/'),
    );
    expect(outside).toEqual([]);
  });

  it('imports the public entries only from other entries (the CLI uses the adapter entry, as a platform would)', () => {
    const entries = new Set(packageEntries().map((entry) => relative(entry.source)));
    const front = new Set(['src/index.ts', 'src/testing.ts', 'src/adapter.ts']);
    const inward = importers(
      (file) => file.file.startsWith('src/') && !entries.has(file.file),
      (imported) => front.has(imported),
    ).filter((line) => !(line.startsWith('src/cli/') && line.endsWith(' -> src/adapter.ts')));
    expect(inward).toEqual([]);
  });

  it('builds every in-tree adapter on the adapter kit alone (types an app names may come from the root)', () => {
    const privateImports = importers(
      (file) => file.file.startsWith('adapters/'),
      (imported) =>
        imported.startsWith('src/') && imported !== 'src/adapter.ts' && imported !== 'src/index.ts',
    );
    expect(privateImports).toEqual([]);
    const rootValues = files
      .filter((file) => file.file.startsWith('adapters/'))
      .flatMap((file) => file.valueImports.filter((imported) => imported === 'src/index.ts'));
    expect(rootValues).toEqual([]);
  });

  it('lets every room import only its own room and the rooms below it, types included', () => {
    const upward = files
      .filter((file) => ROOMS.includes(roomOf(file.file)))
      .flatMap((file) =>
        file.imports
          .filter((target) => ROOMS.indexOf(roomOf(target)) > ROOMS.indexOf(roomOf(file.file)))
          .map((target) => `${file.file} -> ${target}`),
      );
    expect(upward).toEqual([]);
  });

  it('has a room for every folder of src/', () => {
    const folders = fs
      .readdirSync(path.join(repoRoot, 'src'), { withFileTypes: true })
      .filter((dirent) => dirent.isDirectory())
      .map((dirent) => dirent.name);
    expect(folders.sort()).toEqual([...ROOMS].sort());
  });
});
