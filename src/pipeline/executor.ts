import PQueue from 'p-queue';
import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { Slots } from '../claims/store-calls.js';
import { type Rejection, SHUTTING_DOWN } from './ending.js';

export interface ExecutorOptions {
  /** Work running at once. */
  concurrency: number;
  /** Work waiting for a running slot; past it, reserve() refuses. */
  maxQueue: number;
}

/**
 * A piece of work the executor holds: `run` is called when a slot frees up (never after a cut-off), `abandon`
 * when close() gives up on it, queued or running. Exactly one of the two decides the answer.
 */
export interface Job<T> {
  run(): Promise<T>;
  abandon(): Promise<unknown>;
}

interface Entry<T, C> {
  readonly job: Job<T>;
  /** How the request is answered. */
  answer: (result: T | C | PromiseLike<T>) => void;
  /** What the request gets when close() gives up on the job. */
  readonly cutOff: C;
  /** Whether its answer was given: by its run finishing, or by a cut-off. */
  settled: boolean;
  /** Where the executor holds it until it is answered. */
  slot: number;
}

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
    if (this.#cutOff) {
      this.unreserve();
      return job.abandon().then((): C => cutOff);
    }
    return new Promise<T | C>((answer) => {
      const entry: Entry<T, C> = { job, answer, cutOff, settled: false, slot: 0 };
      entry.slot = this.#entries.add(entry as Entry<unknown, unknown>);
      // The queue's own promise is not awaited: a cut-off clears the queue, and the entry answers instead.
      this.#queue.add((): Promise<void> => this.#run(entry));
      this.unreserve();
    });
  }

  #run<T, C>(entry: Entry<T, C>): Promise<void> {
    return entry.job.run().then(
      (result) => this.#answer(entry, result),
      // A job's run settles every expected failure itself; a rejection is a bug, passed on to the caller.
      (error: unknown) => this.#answer(entry, Promise.reject(error)),
    );
  }

  #answer<T, C>(entry: Entry<T, C>, result: T | PromiseLike<T>): void {
    if (!entry.settled) entry.answer(result);
    entry.settled = true;
    this.#entries.remove(entry.slot, entry as Entry<unknown, unknown>);
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
      entry.answer(entry.cutOff);
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

/** Requests past verification: close() waits for them, and refuses new ones once it started. */
export interface Admission {
  closing: boolean;
  enter(): void;
  leave(): void;
  /** Resolves once every admitted request was answered. */
  settled(): Promise<void>;
  /**
   * What `ending` resolves to, or 503 shutting_down once close() gave up waiting: every request still waiting
   * answers it then.
   */
  orGivenUp<T>(ending: Promise<T>): Promise<T | Rejection>;
  /** close() gives up on the admitted requests still waiting. */
  giveUp(): void;
}

/** Counts verified requests not answered yet, so that close() resolves only after their answers. */
export function createAdmission(): Admission {
  let inside = 0;
  let idle: Promise<void> | undefined;
  let resolveIdle: (() => void) | undefined;
  // Each waiting request in a slot of its own, gone once it is answered: not a race with one promise that
  // settles only at close(), which would hold a reaction of every request the receiver ever answered.
  const waiting = new Slots<(ending: Rejection) => void>();
  let gaveUp = false;
  return {
    closing: false,
    enter() {
      inside++;
    },
    leave() {
      inside--;
      if (inside === 0 && resolveIdle) {
        resolveIdle();
        idle = resolveIdle = undefined;
      }
    },
    settled(): Promise<void> {
      if (inside === 0) return Promise.resolve();
      idle ??= new Promise<void>((resolve) => {
        resolveIdle = resolve;
      });
      return idle;
    },
    orGivenUp<T>(ending: Promise<T>): Promise<T | Rejection> {
      if (gaveUp) return Promise.race([ending, Promise.resolve(SHUTTING_DOWN)]);
      return new Promise<T | Rejection>((resolve, reject) => {
        const slot = waiting.add(resolve);
        ending.then(
          (value) => {
            waiting.remove(slot, resolve);
            resolve(value);
          },
          (error: unknown) => {
            waiting.remove(slot, resolve);
            reject(error);
          },
        );
      });
    },
    giveUp() {
      gaveUp = true;
      for (const resolve of waiting.items()) resolve(SHUTTING_DOWN);
    },
  };
}
