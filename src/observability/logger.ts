import { formatLogLine, type RequestLogFields } from './log-line.js';

/**
 * What the receiver logs with. A logger with a `child` method (pino, Fastify's `app.log`, bunyan) is
 * structured: it gets `(fields, message)`, pino's argument order. Any other (console, consola, a
 * `new Console(stream)`) gets one readable text line, because a console prints an object over many lines.
 */
export type Logger = StructuredLogger | LineLogger;

/** pino's shape: given `(fields, message)`; `child` is how the receiver tells it from a console. */
export interface StructuredLogger {
  info(fields: object, message: string): unknown;
  warn(fields: object, message: string): unknown;
  error(fields: object, message: string): unknown;
  child(...args: never[]): unknown;
}

/** console's shape: given one text line. */
export interface LineLogger {
  info(line: string): unknown;
  warn(line: string): unknown;
  error(line: string): unknown;
}

type Level = 'info' | 'warn' | 'error';
type LineWriter = (logger: Logger, level: Level, fields: RequestLogFields, message: string) => void;

// Both are called as methods: pino and a console-like logger may need their `this`.
const structured: LineWriter = (logger, level, fields, message) =>
  (logger as StructuredLogger)[level](fields, message);
const text: LineWriter = (logger, level, fields, message) =>
  (logger as LineLogger)[level](formatLogLine(message, fields));

/** Chosen once per receiver: structured for a logger with `child`, a text line for any other. */
export function requestLogWriter(logger: Logger): LineWriter {
  return typeof (logger as { child?: unknown }).child === 'function' ? structured : text;
}

/** info for 2xx, warn for 4xx (the sender's problem), error for 5xx (ours). */
export function writeRequestLog(logger: Logger, write: LineWriter, fields: RequestLogFields): void {
  const message =
    fields.reason === undefined ? `webhook ${fields.outcome}` : `webhook rejected: ${fields.reason}`;
  const level: Level = fields.status >= 500 ? 'error' : fields.status >= 400 ? 'warn' : 'info';
  try {
    write(logger, level, fields, message);
  } catch {
    // A failing logger must not turn a decided outcome into a crash; there is nowhere left to report it.
  }
}
