import { type MessageStatus, shouldApply, statusRank } from '../events/status-order.js';
import { isFinal, type StatusSource, type TrackedMessage, type TrackedStatus } from './record.js';

/**
 * Which of delivered and failed stands when both come for one message: `'later'` (the later `created_at` wins,
 * the rule of shouldApply; without both timestamps the first one stays), `'delivered'` (a delivery receipt
 * always wins) or `'failed'` (a failure always wins).
 */
export type Precedence = 'later' | 'delivered' | 'failed';

/** What the tracker learned about a message: from a verified event or from the service's status path. */
export interface Observation {
  messageId: string;
  status: MessageStatus;
  /** The event's `created_at` (or the service's time of the status), ISO 8601. */
  createdAt?: string | undefined;
  operator?: string | undefined;
  to?: string | undefined;
  source: Exclude<StatusSource, 'expect' | 'timeout'>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The time of an ISO timestamp, or `fallback` when it is absent or unreadable. */
function timeOr(at: string | undefined, fallback: number): number {
  const time = at === undefined ? Number.NaN : Date.parse(at);
  return Number.isNaN(time) ? fallback : time;
}

/** Whether `incoming` replaces the stored status; a status a message already had is never entered again. */
function moves(record: TrackedMessage, incoming: Observation, precedence: Precedence): boolean {
  if (record.history.some((step) => step.status === incoming.status)) return false;
  if (record.status === 'unknown') return isFinal(incoming.status);
  const stage = statusRank[incoming.status] - statusRank[record.status];
  if (stage !== 0) return stage > 0;
  if (precedence === 'delivered') return incoming.status === 'delivered';
  if (precedence === 'failed') return incoming.status === 'failed';
  return shouldApply(
    { status: record.status, created_at: record.statusCreatedAt },
    { status: incoming.status, created_at: incoming.createdAt },
  );
}

/**
 * The record after `incoming`, or undefined when it changes nothing (a copy, a late and older event, an
 * earlier stage). Pure: the store decides whether this write wins.
 */
export function advance(
  record: TrackedMessage | undefined,
  incoming: Observation,
  precedence: Precedence,
  now: number,
): TrackedMessage | undefined {
  const base: TrackedMessage = record ?? {
    messageId: incoming.messageId,
    status: 'queued',
    expectedAt: now,
    history: [],
    version: 0,
  };
  if (record !== undefined && !moves(record, incoming, precedence)) return filledIn(record, incoming);
  const at = incoming.createdAt ?? iso(now);
  const final = isFinal(incoming.status);
  return {
    ...base,
    status: incoming.status,
    statusCreatedAt: incoming.createdAt,
    to: base.to ?? incoming.to,
    operator: incoming.operator ?? base.operator,
    finalAt: final ? timeOr(incoming.createdAt, now) : undefined,
    history: [...base.history, { status: incoming.status, at, source: incoming.source }],
    version: base.version + 1,
  };
}

/** A status that stays may still bring what the record lacks (the operator of a copy). */
function filledIn(record: TrackedMessage, incoming: Observation): TrackedMessage | undefined {
  const operator = record.operator ?? incoming.operator;
  const to = record.to ?? incoming.to;
  if (operator === record.operator && to === record.to) return undefined;
  return { ...record, operator, to, version: record.version + 1 };
}

/** The record of a message the app sent: queued when new; what it lacks filled in when a webhook came first. */
export function expected(
  record: TrackedMessage | undefined,
  messageId: string,
  details: { to?: string | undefined; sentAt?: number | undefined },
  now: number,
): TrackedMessage | undefined {
  if (record === undefined) {
    const sentAt = details.sentAt;
    return {
      messageId,
      status: 'queued',
      to: details.to,
      sentAt,
      expectedAt: now,
      history: [{ status: 'queued', at: iso(sentAt ?? now), source: 'expect' }],
      version: 1,
    };
  }
  const to = record.to ?? details.to;
  const sentAt = record.sentAt ?? details.sentAt;
  if (to === record.to && sentAt === record.sentAt) return undefined;
  return { ...record, to, sentAt, version: record.version + 1 };
}

/** `unknown` once a message is open `finalAfterMs` after it was sent (or expected); else undefined. */
export function expired(
  record: TrackedMessage,
  finalAfterMs: number,
  now: number,
): TrackedMessage | undefined {
  if (isFinal(record.status)) return undefined;
  if (now - (record.sentAt ?? record.expectedAt) < finalAfterMs) return undefined;
  return {
    ...record,
    status: 'unknown' satisfies TrackedStatus,
    statusCreatedAt: undefined,
    finalAt: now,
    history: [...record.history, { status: 'unknown', at: iso(now), source: 'timeout' }],
    version: record.version + 1,
  };
}
