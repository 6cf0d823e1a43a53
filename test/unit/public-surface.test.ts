import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exportedNames, packageEntries } from '../support/entries.js';

// The root entry is what an application holds in mind: small by purpose, not by count. What only an extension
// needs lives in ./adapter (framework adapters) or ./extend (stores, engines, crypto, tracers), and each name
// has one entry.
const entries = packageEntries();
const names = exportedNames(entries);

describe('public surface', () => {
  it('publishes the application, adapter and testing entries among the others', () => {
    expect(entries.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['.', './adapter', './extend', './testing']),
    );
  });

  it('exports each name from one entry only', () => {
    const owners = new Map<string, string[]>();
    for (const [entry, exported] of names) {
      for (const name of exported) owners.set(name, [...(owners.get(name) ?? []), entry]);
    }
    const shared = [...owners]
      .filter(([, from]) => from.length > 1)
      .map(([name, from]) => `${name}: ${from}`);
    expect(shared).toEqual([]);
  });

  it.each(entries)('$name loads, and every runtime export is one the compiler counts', async (entry) => {
    const module = await import(pathToFileURL(entry.source).href);
    const runtime = Object.keys(module).filter((name) => name !== 'default');
    expect(runtime.length).toBeGreaterThan(0);
    expect(names.get(entry.name)).toEqual(expect.arrayContaining(runtime));
  });
});
