import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { defaultEvents } from '../../src/events/catalogue.js';
import { DEFAULT_SIGNATURE_HEADER, resolveOptions } from '../../src/receiver/options.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../../src/signature/verifier.js';
import { MemoryDedupeStore } from '../../src/stores/memory.js';
import { repoRoot } from '../support/entries.js';
import { readDoc, tableRows } from './doc-tables.js';

// The options table of docs/events-and-options.md against ReceiverOptions (src/receiver/options.ts).

/** The members of `interface ReceiverOptions`, read from the source. */
function receiverOptionNames(): string[] {
  const file = path.join(repoRoot, 'src/receiver/options.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const names: string[] = [];
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'ReceiverOptions') {
      for (const member of node.members) if (member.name) names.push(member.name.getText(source));
    }
  });
  return names;
}

/** Each option the table names, with the default its row states (a row of two options splits on `/`). */
function documented(): Map<string, string> {
  const options = new Map<string, string>();
  for (const [optionCell = '', defaultCell = ''] of tableRows(readDoc('events-and-options.md'), 'option')) {
    const names = [...optionCell.matchAll(/`(\w+)`/g)].map(([, name]) => name as string);
    const defaults = names.length > 1 ? defaultCell.split('/').map((part) => part.trim()) : [defaultCell];
    for (const [i, name] of names.entries()) options.set(name, defaults[i] ?? '');
  }
  return options;
}

const UNIT: Record<string, number> = { ms: 1, s: 1000, min: 60_000, days: 86_400_000, day: 86_400_000 };

/** A default as the table writes it, in the option's own unit; undefined when it is a name, not a value. */
function statedValue(name: string, text: string): unknown {
  if (text === 'none') return undefined;
  const quoted = /^`'(.*)'`$/.exec(text);
  if (quoted) return quoted[1];
  const amount = /^`?(\d+(?:\.\d+)?)`?(?: (MiB|KiB|ms|s|min|days?))?$/.exec(text);
  if (!amount) return text === `\`${DEFAULT_SIGNATURE_HEADER}\`` ? DEFAULT_SIGNATURE_HEADER : NAMED;
  const [, number = '', unit] = amount;
  if (unit === 'MiB') return Number(number) * 1024 * 1024;
  if (unit === 'KiB') return Number(number) * 1024;
  if (unit === undefined) return Number(number);
  expect(name, `${name}: a default in ${unit} on an option not in milliseconds`).toMatch(/Ms$/);
  return Number(number) * (UNIT[unit] as number);
}
const NAMED = Symbol('a named default');

describe('docs/events-and-options.md against ReceiverOptions', () => {
  const names = receiverOptionNames();
  const table = documented();

  it('every option is in the table, and every row is an option', () => {
    expect(names.length).toBeGreaterThan(10);
    expect([...table.keys()].sort()).toEqual([...names].sort());
  });

  it('every default the table states is the one the receiver takes', () => {
    const resolved = resolveOptions({ secrets: 'whsec_options_table' }) as unknown as Record<string, unknown>;
    // Defaults that live with the part that applies them, not in the resolved options.
    const applied: Record<string, unknown> = {
      signatureHeader: DEFAULT_SIGNATURE_HEADER,
      toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    };
    const namedDefaults: Record<string, (value: unknown) => boolean> = {
      store: (value) => value instanceof MemoryDedupeStore,
      events: (value) => value === defaultEvents,
      now: (value) => value === Date.now,
    };
    let checked = 0;
    for (const [name, text] of table) {
      if (text === '(required)') continue;
      const value = name in applied ? applied[name] : resolved[name];
      const stated = statedValue(name, text);
      if (stated === NAMED) {
        if (namedDefaults[name]) expect(namedDefaults[name](value), `${name}: ${text}`).toBe(true);
        continue;
      }
      expect(value, `${name}: the table says ${text}`).toEqual(stated);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });
});
