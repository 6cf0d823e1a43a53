import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface Entry {
  /** The package subpath: `.`, `./adapter`, `./redis`... */
  name: string;
  /** The TypeScript source the built entry comes from. */
  source: string;
}

/** Every entry package.json "exports" publishes, mapped from its built .d.ts back to the source file. */
export function packageEntries(): Entry[] {
  const { exports } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  return Object.entries(exports as Record<string, string | { types: string }>)
    .filter((pair): pair is [string, { types: string }] => typeof pair[1] === 'object')
    .map(([name, target]) => ({
      name,
      source: path.join(repoRoot, target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')),
    }));
}

/** The names (values and types) each entry exports, as the compiler sees them. */
export function exportedNames(entries: Entry[]): Map<string, string[]> {
  const program = ts.createProgram(
    entries.map((entry) => entry.source),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry.source);
    const symbol = file && checker.getSymbolAtLocation(file);
    if (!symbol) throw new Error(`${entry.name}: ${entry.source} is not a module`);
    names.set(
      entry.name,
      checker.getExportsOfModule(symbol).map((exported) => exported.name),
    );
  }
  return names;
}
