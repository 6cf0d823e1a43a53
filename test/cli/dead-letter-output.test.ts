import { describe, expect, it } from 'vitest';
import { changeReport, listReport, showReport } from '../../src/cli/dead-letter-output.js';
import type { DeadLetter } from '../../src/durable/dead-letters.js';

/* What a dead letter's event and error carry reaches a terminal shown, never acted on. */
// Clipboard write (OSC 52), window title (OSC 0), clear screen, concealed text, a C1 CSI, DEL, NEL and the Unicode
// line and paragraph separators.
const HOSTILE =
  '\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;owned\u0007\u001b[2J\u001b[8m\u009b31m\u007f\u0085\u2028\u2029';
// biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the terminal
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

const entry: DeadLetter = {
  id: `evt_${HOSTILE}`,
  key: `live:evt_${HOSTILE}`,
  jobId: `job_${HOSTILE}`,
  mode: 'live',
  event: { id: `evt_${HOSTILE}`, type: `message.${HOSTILE}`, data: { note: HOSTILE } },
  error: { reason: 'handler_failed', message: `poisoned ${HOSTILE} payload` },
  attempts: 3,
  enqueuedAt: new Date('2026-11-26T10:00:00Z'),
  failedAt: new Date('2026-11-26T10:05:00Z'),
} as DeadLetter;

describe('dead-letter output', () => {
  it('list escapes every control character of ids, types and errors', () => {
    const text = listReport('webhooks', [entry], 1, 0);
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain(
      'evt_\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b]0;owned\\u0007\\u001b[2J\\u001b[8m\\u009b31m',
    );
  });

  it('show escapes every field and the event, its line breaks kept', () => {
    const text = showReport(entry);
    expect(text).not.toMatch(CONTROL);
    expect(text).toMatch(/^error +poisoned \\u001b\]52;c;.*\\u007f\\u0085\\u2028\\u2029 payload$/m);
    expect(text).toContain('"type": "message.\\u001b]52;');
    expect(text).toContain('\\u009b31m\\u007f\\u0085\\u2028\\u2029"');
    expect(text.split('\n').length).toBeGreaterThan(12);
  });

  it('replay and purge results escape the ids and messages they report', () => {
    const text = changeReport('purge', 'webhooks', {
      purged: [entry.id],
      skipped: [{ id: `evt_x${HOSTILE}`, reason: 'live', message: `still running ${HOSTILE}` }],
    });
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain('still running \\u001b]52;');
  });
});
