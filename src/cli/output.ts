import { clearLine, cursorTo } from 'node:readline';
import { stripVTControlCharacters, styleText } from 'node:util';

import { escapeControls } from '../base/printable.js';

export { escapeControls };

type Paint = (text: string) => string;

export interface Palette {
  green: Paint;
  red: Paint;
  yellow: Paint;
  dim: Paint;
  bold: Paint;
}

const plain: Paint = (text) => text;
// The stream was judged here (NO_COLOR, a terminal): Node's own check, which looks at stdout alone, is off.
const style =
  (format: 'green' | 'red' | 'yellow' | 'dim' | 'bold'): Paint =>
  (text) =>
    styleText(format, text, { validateStream: false });

/** ANSI colours only for a terminal, and never when NO_COLOR is set (no-color.org). */
export function palette(stream: NodeJS.WriteStream = process.stdout): Palette {
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
  if (!stream.isTTY || noColor) return { green: plain, red: plain, yellow: plain, dim: plain, bold: plain };
  return {
    green: style('green'),
    red: style('red'),
    yellow: style('yellow'),
    dim: style('dim'),
    bold: style('bold'),
  };
}

const visibleLength = (text: string) => stripVTControlCharacters(text).length;

/** Columns padded to their widest cell; cells may be coloured, and text from outside is escaped before it is. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) =>
    Math.max(visibleLength(cell), ...rows.map((row) => visibleLength(row[column] ?? ''))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell + ' '.repeat((widths[column] ?? 0) - visibleLength(cell)),
      )
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '─'.repeat(width))), ...rows.map(line)].join('\n');
}

export interface Progress {
  update(text: string): void;
  done(): void;
}

/** One line rewritten in place on a terminal (at most every 100 ms); silent when output is piped. */
export function progressLine(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, done() {} };
  let last = 0;
  let pending = '';
  return {
    update(text) {
      pending = text;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      rewrite(stream, text);
    },
    done() {
      rewrite(stream, `${pending}\n`);
    },
  };
}

function rewrite(stream: NodeJS.WriteStream, text: string): void {
  cursorTo(stream, 0);
  clearLine(stream, 0);
  stream.write(text);
}

/**
 * A reader that stops early (`| head -2`) closes the pipe, and the next write fails with EPIPE, which Node
 * emits as an 'error' nobody handles: a stack trace. Nobody is left to read what follows, so the command ends
 * there, quietly, with the exit code it already had (0 when none), as a command a SIGPIPE ends does.
 */
export function endQuietlyWhenReaderLeaves(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}

export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Lines of text from outside, each escaped: its line breaks kept, every other control character shown. */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControls).join('\n');
}

/**
 * JSON text pretty-printed when it parses, else as it is (bodies are the endpoint's answer, not secrets); escaped
 * either way, since the endpoint chose every byte of it.
 */
export function prettyBody(text: string): string {
  try {
    return escapeLines(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    return escapeLines(text);
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.max(0, Math.min(sorted.length - 1, rank))] ?? 0;
}
