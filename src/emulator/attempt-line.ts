import { escapeControls } from '../base/printable.js';
import type { DeliveryKind } from './state.js';

/** One webhook attempt as it happened: what `onAttempt` is given, and what the terminal prints. */
export interface WebhookAttempt {
  /** ISO time the request was sent. */
  at: string;
  organization: string;
  mode: 'test' | 'live';
  event_id: string;
  event_type: string;
  /** The endpoint the request went to. */
  url: string;
  /** 1 for the first attempt of a delivery, then 2, 3… */
  attempt: number;
  kind: DeliveryKind;
  /** 0 when no answer came. */
  status: number;
  /** The receiver's `error.code`. */
  reason?: string;
  duplicate: boolean;
  /** Why no answer came (a refused connection, a timeout). */
  error?: string;
  /** What chaos did to this attempt. */
  variant?: 'stale' | 'tampered';
}

/**
 * The attempt as one terminal line: time, organization (when there are several), mode, event type and id, URL,
 * answer, attempt number. Everything from outside (the event's type, the answer's code, an error) is escaped.
 */
export function attemptLine(attempt: WebhookAttempt, showOrganization: boolean): string {
  const time = attempt.at.slice(11, 23);
  const answer =
    attempt.status === 0
      ? `no answer (${attempt.error ?? 'no response'})`
      : [String(attempt.status), attempt.reason, attempt.duplicate ? 'duplicate' : undefined]
          .filter(Boolean)
          .join(' ');
  const notes = [
    attempt.kind === 'original' ? undefined : attempt.kind,
    attempt.variant ? `${attempt.variant} on purpose` : undefined,
  ].filter(Boolean);
  const parts = [
    time,
    ...(showOrganization ? [attempt.organization] : []),
    attempt.mode,
    attempt.event_type,
    attempt.event_id,
    `→ ${attempt.url}`,
    answer,
    `attempt ${attempt.attempt}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`,
  ];
  return escapeControls(parts.join('  '));
}
