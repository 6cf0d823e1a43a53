import type { MessageStatus } from '../events/status-order.js';

/** A message's status as the tracker keeps it: the service's four, and `unknown` once no receipt came in time. */
export type TrackedStatus = MessageStatus | 'unknown';

/**
 * What brought a status: the app's `expect()`, a verified webhook (or a copy of it), a reconciliation pass that
 * asked the service, or the `finalAfterMs` deadline passing without a final receipt.
 */
export type StatusSource = 'expect' | 'webhook' | 'reconcile' | 'timeout';

/** One step of a message's history. */
export interface StatusStep {
  readonly status: TrackedStatus;
  /** When the status was reached: the event's `created_at` when it had one, else when the tracker learned it. */
  readonly at: string;
  readonly source: StatusSource;
}

/**
 * A message as a status store keeps it. `version` grows by one with each write: a store writes a record only
 * over the version the writer read, which is how two processes never both make one transition.
 */
export interface TrackedMessage {
  messageId: string;
  status: TrackedStatus;
  /** The `created_at` of the event that set `status`, for precedence between delivered and failed. */
  statusCreatedAt?: string | undefined;
  to?: string | undefined;
  operator?: string | undefined;
  /** When the app sent it (milliseconds since the epoch). */
  sentAt?: number | undefined;
  /** When the tracker first heard of it (expect or a first event), milliseconds since the epoch. */
  expectedAt: number;
  /** When a final status was reached (milliseconds since the epoch); absent while it is open. */
  finalAt?: number | undefined;
  history: StatusStep[];
  version: number;
}

/** Final statuses: delivered, failed, unknown. A message is open while queued or submitted. */
export function isFinal(status: TrackedStatus): boolean {
  return status === 'delivered' || status === 'failed' || status === 'unknown';
}

export interface StatusViewBase {
  readonly messageId: string;
  readonly history: readonly StatusStep[];
  readonly to: string | undefined;
  readonly operator: string | undefined;
  /** When the app sent it, as passed to expect(). */
  readonly sentAt: Date | undefined;
}

/** Still on its way: no final status yet. */
export interface OpenStatus extends StatusViewBase {
  readonly status: 'queued' | 'submitted';
  readonly final: false;
  readonly latencyMs: undefined;
}

/** A receipt came: `latencyMs` is the time from `sentAt` to the receipt (undefined without a `sentAt`). */
export interface ReceiptStatus extends StatusViewBase {
  readonly status: 'delivered' | 'failed';
  readonly final: true;
  readonly latencyMs: number | undefined;
}

/** No final receipt within `finalAfterMs`: the tracker stopped waiting. A later receipt still replaces it. */
export interface UnknownStatus extends StatusViewBase {
  readonly status: 'unknown';
  readonly final: true;
  readonly latencyMs: undefined;
}

/** What `tracker.status()` gives: narrow it by `status` or `final`. */
export type MessageStatusView = OpenStatus | ReceiptStatus | UnknownStatus;

/** One change of a message's status, as transition handlers get it. */
export interface StatusTransition {
  readonly messageId: string;
  /** The status before; undefined for the first one. */
  readonly from: TrackedStatus | undefined;
  readonly to: TrackedStatus;
  readonly source: StatusSource;
  readonly at: string;
  readonly operator: string | undefined;
  /** From `sentAt` to a delivered or failed receipt; undefined otherwise. */
  readonly latencyMs: number | undefined;
}

/** Time from sentAt to the final receipt, for delivered and failed only. */
export function latencyOf(record: TrackedMessage): number | undefined {
  if (record.status !== 'delivered' && record.status !== 'failed') return undefined;
  if (record.sentAt === undefined || record.finalAt === undefined) return undefined;
  return Math.max(0, record.finalAt - record.sentAt);
}

export function viewOf(record: TrackedMessage): MessageStatusView {
  const base = {
    messageId: record.messageId,
    history: record.history,
    to: record.to,
    operator: record.operator,
    sentAt: record.sentAt === undefined ? undefined : new Date(record.sentAt),
  };
  const { status } = record;
  if (status === 'delivered' || status === 'failed')
    return { ...base, status, final: true, latencyMs: latencyOf(record) };
  if (status === 'unknown') return { ...base, status, final: true, latencyMs: undefined };
  return { ...base, status, final: false, latencyMs: undefined };
}
