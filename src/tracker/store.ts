import { callUser, withDeadline } from '../base/deadline.js';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import type { TrackedMessage } from './record.js';

/**
 * Where the tracker keeps each message's status. The store decides every transition: `write` is a compare and
 * set on the record's version, so of two processes that read the same record and both want to move it, one
 * write wins and the other reads again. Every method may answer with any thenable; the tracker bounds each
 * call by its `storeTimeoutMs`.
 */
export interface StatusStore {
  /** The record of a message, or undefined when none is kept. */
  read(messageId: string): PromiseLike<TrackedMessage | undefined>;
  /**
   * Writes `record` only when the stored version is `expectedVersion` (0: nothing stored yet), atomically.
   * True when it was written; false when another writer came first (nothing is changed then).
   */
  write(record: TrackedMessage, expectedVersion: number): PromiseLike<boolean>;
  /** Messages not final, first expected at or before `expectedBefore` (ms since the epoch), oldest first. */
  open(expectedBefore: number, limit: number): PromiseLike<TrackedMessage[]>;
  /** How many messages are open now (for the open-messages gauge). */
  countOpen(): PromiseLike<number>;
  close?(): PromiseLike<void>;
}

const METHODS = ['read', 'write', 'open', 'countOpen'] as const;

/** Refuses at creation a store that is not one, with what to pass instead. */
export function checkStatusStore(store: unknown): StatusStore {
  const candidate = store as Partial<Record<string, unknown>> | undefined;
  const missing = METHODS.filter((name) => typeof candidate?.[name] !== 'function');
  if (typeof store !== 'object' || store === null || missing.length > 0) {
    throw new WebhookConfigError(
      `createMessageTracker({ store }) needs a StatusStore (new MemoryStatusStore(), new PostgresStatusStore({ pool }), ` +
        `new RedisStatusStore({ client })); got ${kindOf(store)}${missing.length && store ? ` without ${missing.join(', ')}` : ''}.`,
    );
  }
  return store as StatusStore;
}

/** A status store as the tracker calls it: every answer a native promise. */
export interface BoundedStore {
  read(messageId: string): Promise<TrackedMessage | undefined>;
  write(record: TrackedMessage, expectedVersion: number): Promise<boolean>;
  open(expectedBefore: number, limit: number): Promise<TrackedMessage[]>;
  countOpen(): Promise<number>;
  close(): Promise<void>;
}

/** A store whose every call is a native promise bounded by `timeoutMs`, however the store answers or throws. */
export function boundedStore(store: StatusStore, timeoutMs: number): BoundedStore {
  const bounded = <T>(what: string, call: () => PromiseLike<T>): Promise<T> =>
    withDeadline(Promise.resolve(callUser(call)), timeoutMs, `The status store's ${what}`);
  return {
    read: (messageId) => bounded('read', () => store.read(messageId)),
    write: (record, version) => bounded('write', () => store.write(record, version)),
    open: (before, limit) => bounded('open', () => store.open(before, limit)),
    countOpen: () => bounded('countOpen', () => store.countOpen()),
    close: () => bounded('close', () => store.close?.() ?? Promise.resolve()),
  };
}
