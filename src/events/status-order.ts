/**
 * The service retries deliveries with backoff and jitter, so events about one message can arrive in any
 * order: a `message.delivered` may come before the `submitted` it follows. These helpers keep a stored
 * status monotonic: queued → submitted → delivered | failed, with `created_at` breaking ties.
 */

export type MessageStatus = 'queued' | 'submitted' | 'delivered' | 'failed';

/** delivered and failed share the last rank: either can end a message, `created_at` decides between them. */
export const statusRank: Readonly<Record<MessageStatus, number>> = {
  queued: 0,
  submitted: 1,
  delivered: 2,
  failed: 2,
};

/** What you store per message: its status and the `created_at` of the event that set it. */
export interface StatusRecord {
  status: MessageStatus;
  /** ISO 8601 with an offset, as the event carries it; may be absent (open in the preview API). */
  created_at?: string | undefined;
}

/** True when `next` is further along than `current`; equal ranks are not newer (see shouldApply). */
export function isNewerStatus(current: MessageStatus, next: MessageStatus): boolean {
  return statusRank[next] > statusRank[current];
}

/**
 * Whether an incoming event should replace the stored status. Rank first: a later stage always wins, an
 * earlier one never does, whatever the clocks say. Same rank (a repeat, or delivered vs failed): only a
 * strictly later `created_at` wins; when either timestamp is missing or unreadable the stored one stays.
 */
export function shouldApply(stored: StatusRecord | undefined, incoming: StatusRecord): boolean {
  if (stored === undefined) return true;
  const stage = statusRank[incoming.status] - statusRank[stored.status];
  if (stage !== 0) return stage > 0;
  const storedAt = timeOf(stored.created_at);
  const incomingAt = timeOf(incoming.created_at);
  return storedAt !== undefined && incomingAt !== undefined && incomingAt > storedAt;
}

/** The status an event of the default catalogue reports: `message.delivered` → delivered, and so on. */
export function statusOfEvent(type: string): MessageStatus | undefined {
  const status = type.startsWith('message.') ? type.slice('message.'.length) : '';
  return Object.hasOwn(statusRank, status) ? (status as MessageStatus) : undefined;
}

function timeOf(createdAt: string | undefined): number | undefined {
  if (createdAt === undefined) return undefined;
  const time = Date.parse(createdAt);
  return Number.isNaN(time) ? undefined : time;
}
