import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { causeText, WebhookConfigError } from '../base/errors.js';
import { option, rules } from '../base/options.js';
import type { DeadLetterCode } from '../contract/errors.js';
import { DeadLetterError } from './dead-letter-error.js';
import { type ChangeOptions, eachPage, inLanes, progressOf } from './dead-letter-pages.js';
import type { DurableJob, JobEngine } from './port.js';

export { DeadLetterError, type DeadLetterErrorCode } from './dead-letter-error.js';
export type { ChangeOptions, DeadLetterProgress } from './dead-letter-pages.js';

/** An event that failed every attempt and sits in its engine's dead-letter. */
export interface DeadLetter {
  /** The event's id (`evt_…`), or its dedupe key when the event has none: what show, replay and purge take. */
  id: string;
  /** The dedupe key, the job's identity: `<mode>:<event id>`. */
  key: string;
  /** The job's id in the engine, derived from the key as the queue derives it. */
  jobId: string;
  /** `live` or `test`: the mode the delivery was signed in. */
  mode: string;
  /** The event as the receiver parsed it: its type, id and payload. */
  event: DurableJob['event'];
  /** Why its last attempt failed: the dead-letter reason and the error's message. */
  error: { reason: DeadLetterCode; message: string };
  /** Attempts made before it went to the dead-letter. */
  attempts: number;
  /** When the receiver first handed the event to the engine. */
  enqueuedAt: Date;
  /** When its last attempt failed. */
  failedAt: Date;
}

/** Why an event named to replay or purge was left as it is. */
export type SkipReason = 'live' | 'completed' | 'not_found';

export interface SkippedDeadLetter {
  /** The id as given (or as listed, for `'all'`). */
  id: string;
  /** `live`: its job is waiting or running; `completed`: it ran since; `not_found`: no such dead letter. */
  reason: SkipReason;
  /** What happened and what to do instead. */
  message: string;
}

export interface ReplayResult {
  /** The ids put back in the queue, each with a fresh attempt count under its own job id. */
  replayed: string[];
  /** The ids left as they are, each with why. */
  skipped: SkippedDeadLetter[];
}

export interface PurgeResult {
  /** The ids deleted from the engine: a later delivery of one of them is a new job. */
  purged: string[];
  /** The ids left as they are, each with why. */
  skipped: SkippedDeadLetter[];
}

/** Event ids (or dedupe keys), or `'all'`: every dead letter of the queue. */
export type DeadLetterSelection = readonly string[] | 'all';

/**
 * The dead letters of one durable queue, as an operator handles them: read them, put them back in the
 * queue once their handler is fixed, or delete them. Every call to the engine has a deadline.
 */
export interface DeadLetters {
  /** The job engine the dead letters are in: `bullmq`, `pg-boss`. */
  readonly engine: string;
  /** Dead letters, the latest failure first; `limit` default 20 (at most 1000), `offset` default 0. */
  list(options?: { limit?: number; offset?: number }): Promise<DeadLetter[]>;
  /** How many dead letters the queue holds. */
  count(): Promise<number>;
  /** The dead letter of an event id (or a dedupe key), or undefined. */
  show(id: string): Promise<DeadLetter | undefined>;
  /**
   * Puts dead letters back in the queue with a fresh attempt count, under the same job id the queue gave
   * them, so that a replay never runs beside a live copy of its event: an event whose job is waiting or
   * running is skipped (`live`), so is one that completed since (`completed`).
   */
  replay(ids: DeadLetterSelection, options?: ChangeOptions): Promise<ReplayResult>;
  /** Deletes dead letters; an event whose job is live is skipped, never deleted. */
  purge(ids: DeadLetterSelection, options?: ChangeOptions): Promise<PurgeResult>;
  /** Closes what it opened itself (never a queue, connection or boss you gave it). */
  close(): Promise<void>;
}

/** What an engine implements; the deadlines, the checks and the handling of `'all'` are done once, here. */
export interface DeadLetterEngine {
  /** The engine's name and what it runs on, for DeadLetters.engine and messages. */
  readonly engine: JobEngine;
  /** Latest failure first, or with `oldestFirst` the order in which they failed. */
  list(limit: number, offset: number, oldestFirst?: boolean): Promise<DeadLetter[]>;
  count(): Promise<number>;
  /** The dead letters of one event id (one per mode) or of one dedupe key. */
  find(id: string): Promise<DeadLetter[]>;
  /** Why no dead letter answers to `id`: the event's job is live, completed, or unknown. */
  absent(id: string): Promise<SkippedDeadLetter>;
  /** Puts one back; undefined once it is queued, else why not. */
  replay(entry: DeadLetter): Promise<SkippedDeadLetter | undefined>;
  purge(entry: DeadLetter): Promise<SkippedDeadLetter | undefined>;
  close(): Promise<void>;
}

export const DEFAULT_DEADLINE_MS = 10_000;
const MAX_LIMIT = 1000;
const MODES = ['live', 'test'];

/**
 * The dedupe keys an id may stand for: the event id in each mode, and the id itself when it reads as a key
 * (`<mode>:…`). An event id may hold `:` itself, so a colon alone never makes an id a key.
 */
export function candidateKeys(id: string): string[] {
  const keys = MODES.map((mode) => `${mode}:${id}`);
  return MODES.some((mode) => id.startsWith(`${mode}:`)) ? [id, ...keys] : keys;
}

/** The id show/replay/purge take for a job: its event id, else (an event without one) its dedupe key. */
export function deadLetterId(job: DurableJob): string {
  return typeof job.event?.id === 'string' ? job.event.id : job.key;
}

/**
 * The dead-letter reason of a failure as the engine kept it: the worker's code when stored, else its message
 * (the run's own messages first, then the engine's).
 */
export function failureReason(message: string, engine: JobEngine, code?: unknown): DeadLetterCode {
  if (code === 'handler_timeout' || /ran past handlerTimeoutMs/.test(message)) return 'handler_timeout';
  if (code === 'handler_failed' || /^A handler for \S+ failed\./.test(message)) return 'handler_failed';
  return engine.failureReason(message) ?? 'handler_failed';
}

export const skipped = {
  live: (id: string): SkippedDeadLetter => ({
    id,
    reason: 'live',
    message: `The job of ${id} is waiting or running: it was left as it is, so the event never runs twice. Wait for it to end.`,
  }),
  completed: (id: string): SkippedDeadLetter => ({
    id,
    reason: 'completed',
    message: `The job of ${id} completed: its handlers ran, so it was left as it is.`,
  }),
  notFound: (id: string): SkippedDeadLetter => ({
    id,
    reason: 'not_found',
    message: `No dead letter of ${id} in this queue: check the id (list shows them) and the queue's name.`,
  }),
};

/** The DeadLetters of an engine: each engine call under `deadlineMs`, and the arguments checked first. */
export function deadLetters(engine: DeadLetterEngine, deadlineMs = DEFAULT_DEADLINE_MS): DeadLetters {
  option('deadlineMs', deadlineMs, DEFAULT_DEADLINE_MS, rules.whole({ min: 1, unit: 'milliseconds' }));
  const call = <T>(what: string, work: () => Promise<T>) => engineCall(engine, what, deadlineMs, work);

  async function apply(
    selection: DeadLetterSelection,
    what: string,
    change: (entry: DeadLetter) => Promise<SkippedDeadLetter | undefined>,
    options: ChangeOptions = {},
  ): Promise<{ done: string[]; skipped: SkippedDeadLetter[] }> {
    const done: string[] = [];
    const skips: SkippedDeadLetter[] = [];
    const progress = progressOf(options);
    const changeEach = async (entries: DeadLetter[]) => {
      const before = skips.length;
      await inLanes(entries, async (entry) => {
        const skip = await call(`${what} ${entry.id}`, () => change(entry));
        if (skip) skips.push(skip);
        else done.push(entry.id);
      });
      return skips.length - before;
    };
    if (selection === 'all') {
      const count = () => call('Counting dead letters', () => engine.count());
      const list = (limit: number, offset: number) =>
        call('Listing dead letters', () => engine.list(limit, offset, true));
      await eachPage(count, list, changeEach, progress);
    } else {
      const ids = checkedIds(selection, what);
      for (const [index, id] of ids.entries()) {
        await changeEach(await findEach([id], skips));
        progress(index + 1, ids.length);
      }
    }
    return { done, skipped: skips };
  }

  async function findEach(ids: string[], skips: SkippedDeadLetter[]): Promise<DeadLetter[]> {
    const found: DeadLetter[] = [];
    for (const id of ids) {
      const entries = await call(`Looking up ${id}`, () => engine.find(id));
      if (entries.length > 0) found.push(...entries);
      else skips.push(await call(`Looking up ${id}`, () => engine.absent(id)));
    }
    return found;
  }

  return {
    engine: engine.engine.name,
    async list(options = {}) {
      const limit = option('limit', options.limit, 20, rules.whole({ min: 1, max: MAX_LIMIT }));
      const offset = option('offset', options.offset, 0, rules.whole({ min: 0 }));
      return call('Listing dead letters', () => engine.list(limit, offset));
    },
    count: () => call('Counting dead letters', () => engine.count()),
    async show(id) {
      const [first] = await call(`Looking up ${id}`, () =>
        engine.find(checkedIds([id], 'show')[0] as string),
      );
      return first;
    },
    async replay(selection, options) {
      const { done, skipped } = await apply(selection, 'Replaying', engine.replay.bind(engine), options);
      return { replayed: done, skipped };
    },
    async purge(selection, options) {
      const { done, skipped } = await apply(selection, 'Purging', engine.purge.bind(engine), options);
      return { purged: done, skipped };
    },
    close: () => engine.close(),
  };
}

/** `work` within `ms`, its failure a DeadLetterError that names the engine and what to check. */
async function engineCall<T>(
  engine: DeadLetterEngine,
  what: string,
  ms: number,
  work: () => Promise<T>,
): Promise<T> {
  let settled: T | typeof TIMED_OUT;
  try {
    settled = await withTimeout(work(), ms);
  } catch (cause) {
    if (cause instanceof DeadLetterError || cause instanceof WebhookConfigError) throw cause;
    throw new DeadLetterError(
      'engine_unavailable',
      `${what} failed on ${engine.engine.name}: ${causeText(cause) ?? 'no message'}. Check that ${engine.engine.store} is up and reachable at the address given, then run it again.`,
      { cause },
    );
  }
  if (settled === TIMED_OUT) {
    throw new DeadLetterError(
      'engine_timeout',
      `${what} got no answer from ${engine.engine.store} within ${ms} ms. Check that ${engine.engine.store} is up and reachable at the address given (or allow more time), then run it again.`,
    );
  }
  return settled;
}

function checkedIds(ids: unknown, what: string): string[] {
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id !== '')) {
    throw new WebhookConfigError(
      `${what} takes event ids (a non-empty array of strings, as list shows them) or 'all', got ${JSON.stringify(ids)}.`,
    );
  }
  return [...new Set(ids as string[])];
}
