import type { DeadLetter, PurgeResult, ReplayResult } from '../durable/dead-letters.js';
import { BIN } from './args.js';
import { escapeControls, escapeLines, palette, table } from './output.js';

const ERROR_WIDTH = 60;

// Every id, type, key and message below came with an event or its error: escaped before it reaches a terminal.
const one = (text: string, width: number) => {
  const line = escapeControls(text.replace(/\s+/g, ' ').trim());
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
};

const when = (date: Date) =>
  date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

/** The page of dead letters as a table, with where it sits among all of them. */
export function listReport(queue: string, entries: DeadLetter[], total: number, offset: number): string {
  if (entries.length === 0) {
    return total === 0
      ? `No dead letters in queue ${queue}.`
      : `No dead letters past offset ${offset}: queue ${queue} holds ${total}.`;
  }
  const rows = entries.map((entry) => [
    ...[entry.id, entry.event.type, entry.mode].map(escapeControls),
    String(entry.attempts),
    when(entry.failedAt),
    escapeControls(entry.error.reason),
    one(entry.error.message, ERROR_WIDTH),
  ]);
  const last = offset + entries.length;
  const more = last < total ? ` Next page: --offset ${last}.` : '';
  return [
    table(['id', 'type', 'mode', 'attempts', 'failed at', 'reason', 'error'], rows),
    '',
    `${offset + 1}–${last} of ${total} dead letters in queue ${queue}.${more}`,
    `Show one: ${BIN} dead-letter show <id>; put it back once its handler is fixed: ${BIN} dead-letter replay <id>.`,
  ].join('\n');
}

export function showReport(entry: DeadLetter): string {
  const fields: [string, string][] = [
    ['id', entry.id],
    ['type', entry.event.type],
    ['mode', entry.mode],
    ['dedupe key', entry.key],
    ['job id', entry.jobId],
    ['attempts', String(entry.attempts)],
    ['enqueued at', when(entry.enqueuedAt)],
    ['failed at', when(entry.failedAt)],
    ['reason', entry.error.reason],
    ['error', entry.error.message],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const lines = fields.map(([name, value]) => `${name.padEnd(width)}  ${escapeControls(value)}`);
  return `${lines.join('\n')}\n\nevent:\n${escapeLines(JSON.stringify(entry.event, null, 2))}`;
}

export function changeReport(action: 'replay' | 'purge', queue: string, result: ReplayResult | PurgeResult) {
  const color = palette();
  const done = 'replayed' in result ? result.replayed : result.purged;
  const verb = action === 'replay' ? 'replayed' : 'purged';
  const rows = [
    ...done.map((id) => [escapeControls(id), color.green(verb), '']),
    ...result.skipped.map((skip) => [
      escapeControls(skip.id),
      color.yellow(`skipped: ${escapeControls(skip.reason)}`),
      escapeControls(skip.message),
    ]),
  ];
  const summary = `${done.length} ${verb}, ${result.skipped.length} skipped (queue ${queue}).`;
  if (rows.length === 0) return `No dead letters in queue ${queue}: nothing ${verb}.`;
  return `${table(['id', 'result', 'detail'], rows)}\n\n${summary}`;
}
