import { escapeControls } from '../base/printable.js';
import type { Outcome } from '../contract/outcome.js';
import type { RejectionReason } from '../contract/reasons.js';
import type { RejectionDiagnostics, WebhookRejection } from './diagnostics.js';

/** The one structured line written per request. Never a secret, a signature or a body. */
export interface RequestLogFields {
  requestId: string;
  status: number;
  /** `processed`, `duplicate`, `accepted` or the reason code of a rejection. */
  outcome: string;
  reason?: string;
  eventId?: string;
  eventType?: string;
  /** Only when the secrets option separates live and test: the mode whose secret verified. */
  mode?: string;
  /** With the receiver's `tenant` option: the tenant the request named (quoted and escaped like any value). */
  tenant?: string;
  durationMs: number;
  /** Rejections only: the message the sender was answered with, which says what to do. */
  hint?: string;
  /** The message of the first error told to onError while the request was answered (its cause's text included). */
  error?: string;
  /** 4xx only: what the operator needs to tell a misconfiguration from an attack. */
  diagnostics?: RejectionDiagnostics;
}

/** The fields that lead the line, in this order, without their names. */
const LEADING = new Set(['requestId', 'status', 'durationMs', 'outcome', 'reason']);

/**
 * One line a person reads and grep finds: `webhook rejected: signature_mismatch req_… 401 0.4ms hint="…"
 * body.bytes=187 …`. Nested fields are flattened to dotted names; a value with a space, a quote, an equals
 * sign or a control character is JSON-quoted, with the control characters JSON leaves as they are (DEL, C1,
 * U+2028, U+2029) escaped too, so a sender's event type or request id can never start a line of its own, pass
 * for another field, or act on the terminal that shows the log.
 */
export function formatLogLine(message: string, fields: RequestLogFields): string {
  const parts = [message, quote(fields.requestId), String(fields.status), `${fields.durationMs}ms`];
  const { diagnostics, ...rest } = fields;
  for (const [name, value] of Object.entries(rest)) {
    if (!LEADING.has(name) && value !== undefined) parts.push(`${name}=${quote(value)}`);
  }
  if (diagnostics) flatten(diagnostics, '', parts);
  return parts.join(' ');
}

function flatten(value: object, prefix: string, parts: string[]): void {
  for (const [name, member] of Object.entries(value)) {
    if (member === undefined) continue;
    const key = `${prefix}${name}`;
    if (typeof member === 'object' && member !== null && !Array.isArray(member)) {
      flatten(member, `${key}.`, parts);
    } else {
      parts.push(`${key}=${quote(member)}`);
    }
  }
}

/**
 * A value written as it is: no white space (the line separators U+2028 and U+2029 among it), quote, equals sign,
 * backslash, control character (C1's U+0085 and CSI among them) or invisible format character (bidi overrides).
 */
const PLAIN = /^[^\s"=\\\p{Cc}\p{Cf}]+$/u;

function quote(value: unknown): string {
  if (Array.isArray(value)) {
    const items = value.map(String);
    return items.length > 0 && items.every((item) => PLAIN.test(item) && !item.includes(','))
      ? items.join(',')
      : escapeControls(JSON.stringify(value));
  }
  const text = String(value);
  return PLAIN.test(text) ? text : escapeControls(JSON.stringify(text));
}

/** The message of the error answer (our own JSON): the hint the sender got. */
export function answeredMessage(outcome: Outcome): string | undefined {
  try {
    const message = (JSON.parse(outcome.body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

export function rejection(fields: RequestLogFields): WebhookRejection {
  const { requestId, status, reason, hint, eventId, eventType, mode, tenant, diagnostics } = fields;
  const told: WebhookRejection = {
    requestId,
    status,
    reason: reason as RejectionReason,
    message: hint ?? '',
  };
  if (eventId !== undefined) told.eventId = eventId;
  if (eventType !== undefined) told.eventType = eventType;
  if (mode !== undefined) told.mode = mode as WebhookRejection['mode'];
  if (tenant !== undefined) told.tenant = tenant;
  if (diagnostics !== undefined) told.diagnostics = diagnostics;
  return told;
}
