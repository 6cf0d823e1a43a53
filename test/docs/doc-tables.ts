import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/entries.js';

/** A page of docs/ as text. */
export function readDoc(name: string): string {
  return fs.readFileSync(path.join(repoRoot, 'docs', name), 'utf8');
}

/** The body rows of the first Markdown table whose header row starts with `firstHeader`, each as its cells. */
export function tableRows(doc: string, firstHeader: string): string[][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => splitRow(line)[0] === firstHeader);
  if (start < 0) throw new Error(`No table whose first column is "${firstHeader}".`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(splitRow(line));
  }
  return rows;
}

function splitRow(line: string): string[] {
  if (!line.startsWith('|')) return [];
  return line
    .slice(1, line.endsWith('|') ? -1 : undefined)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/** The text between `<!-- name:start -->` and `<!-- name:end -->`, trimmed. */
export function generatedSection(doc: string, name: string): string {
  const match = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(doc);
  if (!match) throw new Error(`No <!-- ${name}:start --> … <!-- ${name}:end --> section.`);
  return (match[1] ?? '').trim();
}
