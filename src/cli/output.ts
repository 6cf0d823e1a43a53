type Paint = (text: string) => string;

export interface Palette {
  green: Paint;
  red: Paint;
  yellow: Paint;
  dim: Paint;
  bold: Paint;
}

const plain: Paint = (text) => text;
const ansi =
  (open: number, close: number): Paint =>
  (text) =>
    `\u001b[${open}m${text}\u001b[${close}m`;

/** ANSI colours only for a terminal, and never when NO_COLOR is set (no-color.org). */
export function palette(stream: NodeJS.WriteStream = process.stdout): Palette {
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
  if (!stream.isTTY || noColor) return { green: plain, red: plain, yellow: plain, dim: plain, bold: plain };
  return {
    green: ansi(32, 39),
    red: ansi(31, 39),
    yellow: ansi(33, 39),
    dim: ansi(2, 22),
    bold: ansi(1, 22),
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ESCAPES = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string) => text.replace(ESCAPES, '').length;

/** Columns padded to their widest cell; cells may be coloured. */
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
      stream.write(`\r\u001b[K${text}`);
    },
    done() {
      stream.write(`\r\u001b[K${pending}\n`);
    },
  };
}

export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** JSON text pretty-printed when it parses, else as it is (bodies are the endpoint's answer, not secrets). */
export function prettyBody(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.max(0, Math.min(sorted.length - 1, rank))] ?? 0;
}
