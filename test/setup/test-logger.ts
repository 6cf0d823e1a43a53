import type { Logger } from '../../src/observability/logger.js';
import { captureLogText } from './log-capture.js';

export interface LoggedLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/**
 * A pino-shaped logger for tests: keeps its lines for assertions and adds them to the suite's log scan. It has
 * `child`, as pino has: the receiver gives such a logger `(fields, message)`, a console one text line.
 */
export function createTestLogger(): { logger: Logger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const write = (level: LoggedLine['level']) => (fields: object, message: string) => {
    const line = { level, fields: structuredClone(fields) as Record<string, unknown>, message };
    lines.push(line);
    captureLogText(JSON.stringify(line));
  };
  const logger = { info: write('info'), warn: write('warn'), error: write('error'), child: () => logger };
  return { logger, lines };
}
