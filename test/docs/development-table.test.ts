import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../support/entries.js';
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, ROOMS } from '../support/house-rules.js';
import { readDoc, tableRows } from './doc-tables.js';

// The "where a change goes" table of docs/development.md names the files each change touches: they must exist.
it('every file the table of changes names exists (but the ones the change itself adds)', () => {
  const rows = tableRows(readDoc('development.md'), 'a change');
  expect(rows.length).toBeGreaterThanOrEqual(9);
  const named = rows.flatMap(([, files = '']) => [
    ...files.matchAll(/`((?:src|test|docs|api|adapters)\/[^`]+)`/g),
  ]);
  const paths = named.map(([, file]) => file as string).filter((file) => !/<name>|\/sqs\/|nestjs/.test(file));
  expect(paths.length).toBeGreaterThan(25);
  for (const file of paths) expect(fs.existsSync(path.join(repoRoot, file)), file).toBe(true);
});

// Its table of folders is the house test's rooms, lowest first, and its rules are the ones that test enforces.
it('states the house rules test/unit/house.test.ts enforces', () => {
  const doc = readDoc('development.md');
  const folders = tableRows(doc, 'folder').flatMap(([cell = '']) =>
    [...cell.matchAll(/`([a-z-]+)\/`/g)].map(([, folder]) => folder),
  );
  expect(folders).toEqual(ROOMS);
  const rules = doc.replace(/\s+/g, ' ');
  expect(rules).toContain('types included');
  expect(rules).toContain(`over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} lines`);
});
