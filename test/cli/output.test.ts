import { afterEach, describe, expect, it } from 'vitest';
import { escapeControls, palette, percentile, prettyBody, table } from '../../src/cli/output.js';

const tty = { isTTY: true } as NodeJS.WriteStream;
const pipe = { isTTY: false } as NodeJS.WriteStream;

describe('CLI output', () => {
  const saved = process.env.NO_COLOR;
  afterEach(() => {
    if (saved === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = saved;
  });

  it('colours only a terminal, and never with NO_COLOR set', () => {
    delete process.env.NO_COLOR;
    expect(palette(tty).red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(palette(pipe).red('x')).toBe('x');
    process.env.NO_COLOR = '1';
    expect(palette(tty).green('x')).toBe('x');
  });

  it('aligns table columns by visible width, colours ignored', () => {
    delete process.env.NO_COLOR;
    const color = palette(tty);
    const text = table(
      ['result', 'check'],
      [
        [color.green('PASS'), 'valid'],
        ['FAIL', 'tampered'],
      ],
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping the colours the table was given
    const lines = text.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
    expect(lines).toEqual(['result  check', '──────  ────────', 'PASS    valid', 'FAIL    tampered']);
  });

  it('escapes every control character: C0, DEL, C1, U+2028 and U+2029; printable text as it is', () => {
    expect(escapeControls('a\u0000\u0007\t\n\r\u001b[2J\u007f\u0085\u009b\u2028\u2029é €')).toBe(
      'a\\u0000\\u0007\\t\\n\\r\\u001b[2J\\u007f\\u0085\\u009b\\u2028\\u2029é €',
    );
  });

  it("an endpoint's answer is printed escaped, JSON or not, its line breaks kept", () => {
    expect(prettyBody('{"error":"\\u001b]0;owned\\u0007\\u009b\u009b"}')).toBe(
      '{\n  "error": "\\u001b]0;owned\\u0007\\u009b\\u009b"\n}',
    );
    expect(prettyBody('line one\u001b[2J\nline two\u0085')).toBe('line one\\u001b[2J\nline two\\u0085');
  });

  it('percentiles by nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });
});
