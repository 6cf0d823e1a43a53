import { describe, expect, it } from 'vitest';
import { type ReasonCode, reasonAnswers } from '../../src/contract/reasons.js';
import { generatedSection, readDoc, tableRows } from './doc-tables.js';

// docs/http-answers.md is the HTTP contract as readers see it: it must say what src/contract/reasons.ts answers.
const page = readDoc('http-answers.md');
const codes = Object.keys(reasonAnswers) as ReasonCode[];

/** The reference table of the page, as it must read: one row per reason code, in the order of reasons.ts. */
function referenceTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = codes.map((code) => {
    const { status, retry, message } = reasonAnswers[code];
    return `| \`${code}\` | ${status} | ${retry} | ${cell(message)} |`;
  });
  return ['| code | status | retry | message |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

describe('docs/http-answers.md against src/contract/reasons.ts', () => {
  it('the table of every reason code has its status, retry advice and message', () => {
    // On a change to reasons.ts, paste the expected table (the diff below) between the page's markers.
    expect(generatedSection(page, 'reasons')).toBe(referenceTable());
  });

  it('every reason code is in the situations table, with its status and its Retry-After', () => {
    const rows = tableRows(page, 'situation');
    for (const code of codes) {
      const row = rows.find((cells) => (cells[2] ?? '').includes(`\`${code}\``));
      expect(row, `${code} is in no row of the situations table`).toBeDefined();
      const [, statusCell = '', codeCell = ''] = row as string[];
      const statuses = [...statusCell.matchAll(/\d{3}/g)].map(([status]) => Number(status));
      const named = [...codeCell.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name);
      // `405 / 415 / 413` beside `a` / `b` / `c` pairs them in order; one status stands for every code of its row.
      const status = statuses.length === named.length ? statuses[named.indexOf(code)] : statuses[0];
      expect(status, code).toBe(reasonAnswers[code].status);
      expect(statusCell.includes('Retry-After'), `${code}: Retry-After`).toBe(
        reasonAnswers[code].retry === 'later',
      );
    }
  });
});
