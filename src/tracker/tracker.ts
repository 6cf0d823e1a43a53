import { callUser, isThenable, withDeadline } from '../base/deadline.js';
import { WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import { statusOfEvent } from '../events/status-order.js';
import { MemoryStatusStore } from './memory-store.js';
import { TrackerMetricsRecorder, type TrackerMetricsSnapshot } from './metrics.js';
import { type ReconcileOptions, type ReconcileSummary, reconcile } from './reconcile.js';
import {
  latencyOf,
  type MessageStatusView,
  type StatusSource,
  type StatusTransition,
  type TrackedMessage,
  viewOf,
} from './record.js';
import { advance, expected, expired, type Observation, type Precedence } from './rules.js';
import { type BoundedStore, boundedStore, checkStatusStore, type StatusStore } from './store.js';

export interface MessageTrackerOptions {
  /** Where statuses are kept. Default: a MemoryStatusStore (one process). */
  store?: StatusStore;
  /** delivered versus failed for one message. Default `'later'`: the later `created_at` wins. */
  precedence?: Precedence;
  /** A message with no final status this long after it was sent becomes `unknown`. Default 72 h. */
  finalAfterMs?: number;
  /** Longest wait for one call to the store (milliseconds). Default 5000. */
  storeTimeoutMs?: number;
  /** Longest wait for one transition handler (milliseconds). Default 10000. */
  handlerTimeoutMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** A transition handler; it may return a promise, which is waited for (up to `handlerTimeoutMs`). */
export type TransitionHandler = (transition: StatusTransition) => unknown;

/** A verified event as the tracker reads it: `message.<status>` with `data.message_id`. */
export interface TrackedEvent {
  type: string;
  created_at?: string | undefined;
  data?: unknown;
}

export interface MessageTracker {
  /** Records a message the app sent, after the service accepted it: queued until events move it. */
  expect(messageId: string, details?: { to?: string; sentAt?: Date | number }): Promise<MessageStatusView>;
  /** The message's status, history and latency; undefined for a message never expected nor heard of. */
  status(messageId: string): Promise<MessageStatusView | undefined>;
  /** Runs `fn` once per message and status, across the processes sharing the store. Returns an unsubscribe. */
  onTransition(fn: TransitionHandler): () => void;
  /** Feeds a verified `message.*` event (the receiver's `tracker` option calls it); other events change nothing. */
  observeEvent(event: TrackedEvent): Promise<StatusTransition[]>;
  /** Feeds what the service reported about a message (reconcile calls it). */
  observe(observation: Observation): Promise<StatusTransition[]>;
  /** Makes a message `unknown` when it is past `finalAfterMs` without a final status. */
  expire(messageId: string): Promise<StatusTransition[]>;
  /**
   * One reconciliation pass: asks the service (`client`) about every expected message still open after
   * `olderThanMs`, through the same rules and transition handlers. Safe from several processes at once.
   */
  reconcile(options: ReconcileOptions): Promise<ReconcileSummary>;
  /** Open messages first expected at or before `expectedBefore` (ms since the epoch), oldest first. */
  openMessages(expectedBefore: number, limit: number): Promise<TrackedMessage[]>;
  /** How many messages are open now. */
  countOpen(): Promise<number>;
  /** What this process counted: receipt latency, transitions by source, reconciled messages by outcome. */
  metrics(): TrackerMetricsSnapshot;
  readonly finalAfterMs: number;
  readonly now: () => number;
  close(): Promise<void>;
}

/** How often a write that lost to another writer reads again before giving up (a write storm on one message). */
const MAX_ATTEMPTS = 50;
const WHOLE_MS = rules.whole({ min: 1, unit: 'milliseconds' });
const WHERE = 'createMessageTracker(…): ';

/** Creates a message tracker; attach it with createReceiver({ …, tracker }). */
export function createMessageTracker(options: MessageTrackerOptions = {}): MessageTracker {
  if (typeof options !== 'object' || options === null)
    throw new WebhookConfigError(
      'createMessageTracker takes an options object: createMessageTracker({ store }).',
    );
  const precedence = option(
    'precedence',
    options.precedence,
    'later',
    rules.oneOf(['later', 'delivered', 'failed']),
    WHERE,
  );
  const finalAfterMs = option('finalAfterMs', options.finalAfterMs, 72 * 3600_000, WHOLE_MS, WHERE);
  const storeTimeoutMs = option('storeTimeoutMs', options.storeTimeoutMs, 5000, WHOLE_MS, WHERE);
  const handlerTimeoutMs = option('handlerTimeoutMs', options.handlerTimeoutMs, 10_000, WHOLE_MS, WHERE);
  const now = options.now ?? Date.now;
  const store = boundedStore(
    checkStatusStore(options.store ?? new MemoryStatusStore({ now })),
    storeTimeoutMs,
  );
  const handlers = new Set<TransitionHandler>();
  const recorder = new TrackerMetricsRecorder();

  const settle = settler(store, handlers, handlerTimeoutMs, recorder);

  const observe = async (observation: Observation) =>
    (await settle(observation.messageId, (record) => advance(record, observation, precedence, now())))
      .transitions;

  const tracker: MessageTracker = {
    async expect(messageId, details = {}) {
      checkMessageId(messageId, 'expect');
      const sentAt = details.sentAt === undefined ? undefined : Number(details.sentAt);
      if (sentAt !== undefined && !Number.isFinite(sentAt))
        throw new WebhookConfigError(
          'tracker.expect(id, { sentAt }): sentAt must be a Date or milliseconds.',
        );
      const { record } = await settle(messageId, (stored) =>
        expected(stored, messageId, { to: details.to, sentAt }, now()),
      );
      return viewOf(record as TrackedMessage);
    },
    async status(messageId) {
      const { record } = await settle(messageId, (stored) => stored && expired(stored, finalAfterMs, now()));
      return record && viewOf(record);
    },
    onTransition(fn) {
      if (typeof fn !== 'function')
        throw new WebhookConfigError('tracker.onTransition(fn) takes a function of the transition.');
      const handler: TransitionHandler = (transition) => fn(transition);
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    observeEvent(event) {
      const observation = observationOf(event, 'webhook');
      return observation ? observe(observation) : Promise.resolve([]);
    },
    observe,
    async expire(messageId) {
      return (await settle(messageId, (stored) => stored && expired(stored, finalAfterMs, now())))
        .transitions;
    },
    openMessages: (before, limit) => store.open(before, limit),
    countOpen: () => store.countOpen(),
    finalAfterMs,
    now,
    metrics: () => recorder.snapshot(),
    async reconcile(reconcileOptions) {
      const summary = await reconcile(tracker, reconcileOptions);
      recorder.reconciled(summary);
      return summary;
    },
    close: async () => {
      await store.close?.();
    },
  };
  return tracker;
}

type Settle = (
  messageId: string,
  decide: (record: TrackedMessage | undefined) => TrackedMessage | undefined,
) => Promise<{ record: TrackedMessage | undefined; transitions: StatusTransition[] }>;

/**
 * Read, decide, compare-and-set; again when another writer won. Only the write that won runs the transition's
 * handlers, so across processes sharing the store each runs once.
 */
function settler(
  store: BoundedStore,
  handlers: Set<TransitionHandler>,
  handlerTimeoutMs: number,
  recorder: TrackerMetricsRecorder,
): Settle {
  return async (messageId, decide) => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const record = await store.read(messageId);
      const next = decide(record);
      if (next === undefined) return { record, transitions: [] };
      if (await store.write(next, record?.version ?? 0)) {
        const transitions = transitionOf(record, next);
        for (const transition of transitions) recorder.transition(transition);
        if (transitions.length > 0) await run(handlers, transitions, handlerTimeoutMs);
        return { record: next, transitions };
      }
    }
    throw new Error(`The status of ${messageId} changed ${MAX_ATTEMPTS} times while it was being written.`);
  };
}

function checkMessageId(messageId: unknown, method: string): void {
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 256)
    throw new WebhookConfigError(
      `tracker.${method}(messageId): the message id must be the service's id (msg_…).`,
    );
}

/** What a verified event says about its message, or undefined when it is no message status or names none. */
export function observationOf(event: TrackedEvent, source: Observation['source']): Observation | undefined {
  const status = statusOfEvent(event.type);
  const data = (typeof event.data === 'object' && event.data !== null ? event.data : {}) as Record<
    string,
    unknown
  >;
  const messageId = data.message_id;
  if (status === undefined || typeof messageId !== 'string' || messageId === '') return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    messageId,
    status,
    createdAt: text(event.created_at),
    operator: text(data.operator),
    to: text(data.to),
    source,
  };
}

/** The transition a winning write made, if its status changed. */
function transitionOf(before: TrackedMessage | undefined, after: TrackedMessage): StatusTransition[] {
  if (before?.status === after.status) return [];
  const step = after.history[after.history.length - 1];
  return [
    {
      messageId: after.messageId,
      from: before?.status,
      to: after.status,
      source: (step?.source ?? 'webhook') as StatusSource,
      at: step?.at ?? new Date(after.expectedAt).toISOString(),
      operator: after.operator,
      latencyMs: latencyOf(after),
    },
  ];
}

/** Runs every handler on every transition; rejects with the failures once all settled. */
async function run(
  handlers: Set<TransitionHandler>,
  transitions: StatusTransition[],
  timeoutMs: number,
): Promise<void> {
  const failures: unknown[] = [];
  for (const transition of transitions) {
    for (const handler of handlers) {
      try {
        const result = callUser(() => handler(transition));
        if (isThenable(result))
          await withDeadline(Promise.resolve(result), timeoutMs, 'A transition handler');
      } catch (error) {
        failures.push(error);
      }
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1)
    throw new AggregateError(failures, `${failures.length} transition handlers failed.`);
}
