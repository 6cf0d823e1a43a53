import { expect, it } from 'vitest';
import { attemptLine, type WebhookAttempt } from '../../src/emulator/attempt-line.js';

const attempt: WebhookAttempt = {
  at: '2026-11-28T06:50:01.234Z',
  organization: 'acme',
  mode: 'test',
  event_id: 'evt_01M8GEMBRX4CB0D2RZ36ED6BSA',
  event_type: 'message.delivered',
  url: 'http://127.0.0.1:3000/webhooks/acme',
  attempt: 2,
  kind: 'original',
  status: 500,
  reason: 'handler_failed',
  duplicate: false,
};

it('prints time, organization, mode, event type and id, URL, answer and attempt number on one line', () => {
  expect(attemptLine(attempt, true)).toBe(
    '06:50:01.234  acme  test  message.delivered  evt_01M8GEMBRX4CB0D2RZ36ED6BSA  → http://127.0.0.1:3000/webhooks/acme  500 handler_failed  attempt 2',
  );
  expect(attemptLine(attempt, false)).not.toContain('acme  test');
  expect(attemptLine({ ...attempt, status: 0, reason: undefined, error: 'ECONNREFUSED' }, false)).toContain(
    'no answer (ECONNREFUSED)  attempt 2',
  );
  expect(
    attemptLine({ ...attempt, status: 200, reason: undefined, duplicate: true, kind: 'resend' }, false),
  ).toMatch(/200 duplicate {2}attempt 2 \(resend\)$/);
});

it('escapes what came from outside, so a terminal shows it and never acts on it', () => {
  const line = attemptLine(
    { ...attempt, event_type: 'message.\u001b[2Jdelivered', reason: 'bad\nline', status: 400 },
    false,
  );
  expect(line).not.toMatch(/\p{Cc}/u);
  expect(line).toContain('message.\\u001b[2Jdelivered');
  expect(line).toContain('400 bad\\nline');
});
