import PQueue from 'p-queue';
import { type Answer, TIMED_OUT, withTimeout } from './deadline.js';

// Work held while requests pass through: the executor that runs it on p-queue, and the slots it (and the lease
// keeper of claims/) holds items in.

export interface ExecutorOptions {
  /** Work running at once. */
  concurrency: number;
  /** Work waiting for a running slot; past it, reserve() refuses. */
  maxQueue: number;
}

/**
 * A piece of work the executor holds: `run` is called when a slot frees up (never after a cut-off) and answers
 * through `to` once it is done (its failure is a bug), `abandon` when close() gives up on it, queued or running.
 * Exactly one of the two decides the answer.
 */
export interface Job<T> {
  run(to: Answer<T>): void;
  abandon(): Promise<unknown>;
}

/** A job held until it is answered; it is the job's `to`, and frees the job's running slot when answered. */
class Entry<T, C> implements Answer<T> {
  /** Whether its answer was given: by its run finishing, or by a cut-off. */
  settled = false;
  /** Where the executor holds it until it is answered. */
  slot = 0;
  /** Ends the job's task on p-queue, which then starts the next one. */
  finished: () => void = noop;

  constructor(
    readonly held: Slots<Entry<unknown, unknown>>,
    readonly job: Job<T>,
    /** How the request is answered. */
    readonly to: Answer<T | C>,
    /** What the request gets when close() gives up on the job. */
    readonly cutOff: C,
  ) {}

  settle(result: T): void {
    this.finished();
    if (this.answering()) this.to.settle(result);
  }

  fail(error: unknown): void {
    this.finished();
    if (this.answering()) this.to.fail(error);
  }

  /** Whether the entry is still to be answered; it is not held any more either way. */
  answering(): boolean {
    const answer = !this.settled;
    this.settled = true;
    this.held.remove(this.slot, this as Entry<unknown, unknown>);
    return answer;
  }
}

const noop = (): void => undefined;

/**
 * Runs work on p-queue: `concurrency` at once, the rest waiting in order. It knows nothing of events or
 * stores. A place is reserved before the caller takes anything it would have to give back (a claim), so a full
 * queue turns work away while nothing is held yet. drain() refuses new reservations, waits for the reserved
 * places to be submitted or given up and for the queue to go idle; past its timeout the work still queued never
 * starts, and every job not finished is abandoned.
 */
export class Executor {
  readonly #queue: PQueue;
  readonly #room: number;
  #reserved = 0;
  #draining = false;
  #cutOff = false;
  #reservationsDone: (() => void) | undefined;
  readonly #entries = new Slots<Entry<unknown, unknown>>();

  constructor(options: ExecutorOptions) {
    this.#queue = new PQueue({ concurrency: options.concurrency });
    this.#room = options.concurrency + options.maxQueue;
  }

  get running(): number {
    return this.#queue.pending;
  }

  get waiting(): number {
    return this.#queue.size;
  }

  /** Takes a place for work about to be submitted; false when the room is full or the executor drains. */
  reserve(): boolean {
    if (this.#draining) return false;
    if (this.#queue.pending + this.#queue.size + this.#reserved >= this.#room) return false;
    this.#reserved++;
    return true;
  }

  /** The reserved place is not needed after all (nothing was claimed). */
  unreserve(): void {
    this.#reserved--;
    if (this.#reserved === 0) this.#reservationsDone?.();
  }

  /**
   * Submits a job in the place reserve() took. Resolves with its run's result, or `cutOff` once drain() gave up
   * on it; after a cut-off a job is abandoned at once and never runs. Rejects only when the run rejected.
   * The caller names its own cut-off answer, so that nothing stands between the run and the request.
   */
  submit<T, C>(job: Job<T>, cutOff: C): Promise<T | C> {
    return new Promise<T | C>((settle, fail) => this.enqueue(job, cutOff, { settle, fail }));
  }

  /** submit, answered through `to` instead of a promise. */
  enqueue<T, C>(job: Job<T>, cutOff: C, to: Answer<T | C>): void {
    if (this.#cutOff) {
      this.unreserve();
      job.abandon().then(
        () => to.settle(cutOff),
        (error: unknown) => to.fail(error),
      );
      return;
    }
    const entry = new Entry(this.#entries, job, to, cutOff);
    entry.slot = this.#entries.add(entry as Entry<unknown, unknown>);
    // The queue's own promise is not awaited: a cut-off clears the queue, and the entry answers instead.
    this.#queue.add((): Promise<void> => this.#run(entry));
    this.unreserve();
  }

  /** The job's task on p-queue: it ends when the job answers its entry. */
  #run<T, C>(entry: Entry<T, C>): Promise<void> {
    return new Promise<void>((finished) => {
      entry.finished = finished;
      try {
        entry.job.run(entry);
      } catch (error) {
        // A job's run settles every expected failure itself; a throw is a bug, passed on to the caller.
        entry.fail(error);
      }
    });
  }

  /**
   * Resolves once every reserved place was submitted or given up and the queue is idle. With `timeoutMs`, gives
   * up after it: queued work never starts, every job not finished is abandoned (its answer is its cut-off), and it
   * resolves once each abandoned job handed back what it held. New reservations are refused from the start.
   */
  async drain(timeoutMs: number | undefined): Promise<void> {
    this.#draining = true;
    const idle = this.#idle();
    if (timeoutMs === undefined) return idle;
    if ((await withTimeout(idle, timeoutMs)) !== TIMED_OUT) return;
    this.#cutOff = true;
    this.#queue.clear();
    const handedBack: Promise<unknown>[] = [];
    for (const entry of this.#entries.items()) {
      entry.settled = true;
      entry.to.settle(entry.cutOff);
      this.#entries.remove(entry.slot, entry);
      handedBack.push(entry.job.abandon());
    }
    await Promise.all(handedBack);
  }

  async #idle(): Promise<void> {
    if (this.#reserved > 0) {
      await new Promise<void>((resolve) => {
        this.#reservationsDone = resolve;
      });
    }
    await this.#queue.onIdle();
  }
}

/**
 * The items a long-lived collection holds while requests pass through it (the executor's work, the leases kept
 * alive), each in a numbered slot that is emptied the moment it is removed.
 *
 * Not a Set or a Map keyed by the item: V8 links a Map's or Set's outgrown table to the one that replaced it,
 * with the entries it held. Under concurrent requests such a collection grows and shrinks all the time, and one
 * outgrown table that reached the old generation then keeps every later table, and each request they held,
 * alive through the next minor GC, which promotes them all (bench/NOTES.md, "what the garbage collector was
 * paying for", has the measurement).
 */
export class Slots<T> {
  readonly #items: (T | undefined)[] = [];
  readonly #free: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Holds the item; the slot it returns removes it again. */
  add(item: T): number {
    const slot = this.#free.pop() ?? this.#items.length;
    this.#items[slot] = item;
    this.#size++;
    return slot;
  }

  /** Whether the item is still held in its slot (a slot is reused once emptied). */
  holds(slot: number, item: T): boolean {
    return this.#items[slot] === item;
  }

  /** Empties the item's slot; nothing happens when it was removed already. */
  remove(slot: number, item: T): void {
    if (this.#items[slot] !== item) return;
    this.#items[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
  }

  /** The items held now, in a new array: the caller may add and remove while it goes through them. */
  items(): T[] {
    const held: T[] = [];
    for (const item of this.#items) if (item !== undefined) held.push(item);
    return held;
  }
}
