import { WebhookHandlerError } from './errors.js';
import type { Catalogue } from './events.js';
import type { ErrorContext, HandlerContext, HandlerRegistry } from './handlers.js';
import type { DedupeStore } from './stores/types.js';

/** How a claimed event ended for its request: claim completed, released, or given up at shutdown. */
export type Settlement =
  | { status: 'completed' }
  | { status: 'failed'; reason: 'handler_failed' | 'store_unavailable' }
  | { status: 'abandoned' };

export interface ClaimedEvent<Tx> {
  event: { type: string; id?: string };
  ctx: HandlerContext<Tx>;
  token: string;
  errorContext: ErrorContext;
}

export interface ProcessorOptions<Tx> {
  store: DedupeStore<Tx>;
  retentionMs: number;
  concurrency: number;
  maxQueue: number;
}

/**
 * queued → running → settling → done, or queued/running → abandoned when close() gives up on it.
 * Only one of the two branches settles the claim, so a claim is completed or released exactly once.
 */
type EntryState = 'queued' | 'running' | 'settling' | 'done' | 'abandoned';

interface Entry<Tx> {
  readonly claimed: ClaimedEvent<Tx>;
  state: EntryState;
  answer: (settlement: Settlement) => void;
  /** Its run in a slot, once it has one: resolves when the entry left the processor. */
  finished: Promise<void>;
}

const ABANDONED: Settlement = { status: 'abandoned' };
/** `finished` of an entry still waiting for a slot: there is no run to wait for yet. */
const FINISHED: Promise<void> = Promise.resolve();
const COMPLETED: Settlement = { status: 'completed' };

export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Runs claimed events through a bounded queue and settles each claim exactly once: complete after every
 * handler succeeded, release when one failed, so the service's retry runs the event again.
 *
 * The queue is a FIFO behind `concurrency` running slots, kept here rather than in a queue library: it is all
 * this needs, and per event it costs a counter and no promise of its own (p-queue cost ~2 µs per event).
 */
export class Processor<C extends Catalogue, Tx> {
  /** Entries running their handlers or settling (at most `concurrency`). */
  #running = 0;
  /** Entries waiting for a running slot, oldest first. */
  #waiting: Entry<Tx>[] = [];
  readonly #entries = new Set<Entry<Tx>>();
  /** Queue slots taken by requests that are claiming their event right now. */
  #reserved = 0;
  /** Requests past the shutdown check that have not answered yet. */
  #admitted = 0;
  #cutOff = false;
  #idleWaiters: (() => void)[] = [];

  constructor(
    readonly registry: HandlerRegistry<C, Tx>,
    readonly options: ProcessorOptions<Tx>,
  ) {}

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** A request entered the pipeline; close() waits for it. Pair with leave(). */
  enter(): void {
    this.#admitted++;
  }

  leave(): void {
    this.#admitted--;
    this.#notifyIfIdle();
  }

  /**
   * Takes a slot before the event is claimed, so that a full queue turns it away unclaimed and the
   * service's retry finds it free. Room is `concurrency` running plus `maxQueue` waiting.
   */
  reserve(): boolean {
    const load = this.#running + this.#waiting.length + this.#reserved;
    if (load >= this.options.concurrency + this.options.maxQueue) return false;
    this.#reserved++;
    return true;
  }

  /** The claim did not give an event to process (duplicate, in flight, store error): free the slot. */
  unreserve(): void {
    this.#reserved--;
  }

  /**
   * Runs the handlers of a claimed event (uses the slot reserve() took) and settles its claim. The promise
   * answers the request and never rejects: failures are reported to onError and returned as a settlement.
   */
  process(claimed: ClaimedEvent<Tx>): Promise<Settlement> {
    this.#reserved--;
    if (this.#cutOff) {
      // Claimed while close() was giving up: hand the event straight back to the service's retry.
      return this.#release(claimed).then(() => ABANDONED);
    }
    let answer!: (settlement: Settlement) => void;
    const answered = new Promise<Settlement>((resolve) => {
      answer = resolve;
    });
    const entry: Entry<Tx> = { claimed, state: 'queued', answer, finished: FINISHED };
    this.#entries.add(entry);
    if (this.#running < this.options.concurrency) this.#start(entry);
    else this.#waiting.push(entry);
    return answered;
  }

  #start(entry: Entry<Tx>): void {
    this.#running++;
    entry.state = 'running';
    entry.finished = this.#settle(entry);
  }

  /** Runs the entry in its slot, then gives the slot to the oldest entry still waiting. */
  async #settle(entry: Entry<Tx>): Promise<void> {
    try {
      await this.#run(entry);
    } catch (error) {
      // #run handles every expected failure; anything here is a bug: hand the event back, never leave it hanging.
      if (entry.state === 'running') await this.#release(entry.claimed);
      await this.#report('store_unavailable', error, entry.claimed);
      this.#finish(entry, { status: 'failed', reason: 'store_unavailable' });
    } finally {
      this.#running--;
      const next = this.#waiting.shift();
      if (next) this.#start(next);
    }
  }

  async #run(entry: Entry<Tx>): Promise<void> {
    const { claimed } = entry;
    const { event, ctx, token } = claimed;
    const { store, retentionMs } = this.options;
    let handlerError: unknown;
    const dispatch = async (tx: Tx) => {
      try {
        await this.registry.dispatch(event, tx === undefined ? ctx : { ...ctx, tx });
      } catch (error) {
        handlerError = error ?? new Error('handler rejected without a reason');
        throw handlerError;
      }
    };
    let failure: { reason: 'handler_failed' | 'store_unavailable'; error: unknown } | undefined;
    try {
      if (store.transact) await store.transact(ctx.dedupeKey, token, retentionMs, dispatch);
      else await dispatch(undefined as Tx);
    } catch (error) {
      failure = { reason: handlerError !== undefined ? 'handler_failed' : 'store_unavailable', error };
    }
    // Cut off by close() while the handlers ran: the claim was released and the request answered then.
    if ((entry.state as EntryState) === 'abandoned') return;
    entry.state = 'settling';
    if (failure) {
      await this.#release(claimed);
      await this.#report(failure.reason, failure.error, claimed);
      this.#finish(entry, { status: 'failed', reason: failure.reason });
      return;
    }
    if (!store.transact) {
      // The handlers succeeded: the answer is 200 whatever happens here. An unrecorded completion only
      // means the lease expires and a later retry may run the event again (at-least-once).
      try {
        const owned = await store.complete(ctx.dedupeKey, token, retentionMs);
        if (!owned)
          await this.#report('store_unavailable', new Error('claim expired before completion'), claimed);
      } catch (error) {
        await this.#report('store_unavailable', error, claimed);
      }
    }
    this.#finish(entry, COMPLETED);
  }

  #finish(entry: Entry<Tx>, settlement: Settlement): void {
    entry.state = settlement === ABANDONED ? 'abandoned' : 'done';
    this.#entries.delete(entry);
    entry.answer(settlement);
    this.#notifyIfIdle();
  }

  /**
   * Waits for admitted requests and claimed events to finish. After `timeoutMs` it gives up: events still
   * waiting or running have their claims released (the service's retry runs them) and their requests are
   * answered shutting_down; settlements already under way are awaited.
   */
  async drain(timeoutMs: number | undefined): Promise<void> {
    const idle = new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#notifyIfIdle();
    });
    const result = timeoutMs === undefined ? await idle : await withTimeout(idle, timeoutMs);
    if (result !== TIMED_OUT) return;
    this.#cutOff = true;
    this.#waiting = []; // every waiting entry is abandoned below: none may take a slot that frees up
    const pending: Promise<unknown>[] = [];
    for (const entry of this.#entries) {
      if (entry.state === 'queued' || entry.state === 'running') {
        entry.state = 'abandoned';
        pending.push(this.#release(entry.claimed).then(() => this.#finish(entry, ABANDONED)));
      } else {
        pending.push(entry.finished);
      }
    }
    await Promise.all(pending);
  }

  #notifyIfIdle(): void {
    if (this.#admitted > 0 || this.#entries.size > 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  async #release(claimed: ClaimedEvent<Tx>): Promise<void> {
    try {
      await this.options.store.release(claimed.ctx.dedupeKey, claimed.token);
    } catch (error) {
      // The lease expires by itself; until then a retry answers 409 event_in_progress.
      await this.#report('store_unavailable', error, claimed);
    }
  }

  #report(reason: 'handler_failed' | 'store_unavailable', cause: unknown, claimed: ClaimedEvent<Tx>) {
    const message =
      reason === 'handler_failed'
        ? `A handler for ${claimed.event.type} failed; the claim was released so the service's retry runs it again.`
        : `The dedupe store failed while settling ${claimed.event.type}.`;
    return this.registry.reportError(
      new WebhookHandlerError(reason, message, { cause }),
      claimed.errorContext,
    );
  }
}

export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
