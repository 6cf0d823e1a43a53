// Waiting, in one place: user code called in one shape (callUser), and the one timeout every wait is bounded
// by (withTimeout, withDeadline, whenLate).

/**
 * User code in one shape. A value that is here now stays a value; one that comes later is a native promise
 * from here on, whatever kind of thenable it came as (Bluebird, an instrumentation wrapper, any Promises/A+
 * object). Stages that wait are async functions and await (see docs/development.md, "Waiting").
 */
export type Awaitable<T> = T | PromiseLike<T>;

/** Anything with a callable `then`: how JavaScript itself tells a value to wait for (the rule `await` uses). */
export function isThenable<T>(value: Awaitable<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Calls code this library does not own (a store, a handler, a hook) and gives back what it answered in one
 * shape: the value when it answered at once, a native promise when it answered with any thenable, a rejected
 * promise when it threw. Nothing it does can throw past this line.
 */
export function callUser<T>(call: () => Awaitable<T>): Awaitable<T> {
  let result: Awaitable<T>;
  try {
    result = call();
  } catch (error) {
    return Promise.reject(error);
  }
  return isThenable(result) ? Promise.resolve(result) : result;
}

/** What withTimeout resolves to when the time ran out before the work settled. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * `work`, or TIMED_OUT once `ms` passed first. The work itself goes on: a promise cannot be stopped. One promise
 * and one reaction, where an async function around Promise.race makes more of both on every enqueue.
 */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return settleFirst(work, ms, (resolve) => resolve(TIMED_OUT));
}

/** `work`, or an Error saying that `what` took too long once `ms` passed first; the work goes on (a write cannot be undone). */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return settleFirst(work, ms, (_resolve, reject) => reject(new Error(`${what} took longer than ${ms} ms.`)));
}

/**
 * `work`, with `late` called once `ms` passed first: `late` gives up on the work in its own way (it must make
 * `work` settle, say by rejecting what it races). The timer goes as soon as `work` settles, however it does.
 */
export function whenLate<T>(work: Promise<T>, ms: number, late: () => void): Promise<T> {
  return settleFirst(work, ms, () => late());
}

/** Queues whose enqueue rejects at its own deadline (withDeadline inside): a caller need not arm another. */
const boundedQueues = new WeakSet<object>();

/** Marks `queue` as one whose enqueue is bounded by its own deadline. */
export function boundsItsOwnEnqueue<Q extends object>(queue: Q): Q {
  boundedQueues.add(queue);
  return queue;
}

/** Whether `queue` was marked by boundsItsOwnEnqueue. */
export function enqueueIsBounded(queue: object): boolean {
  return boundedQueues.has(queue);
}

function settleFirst<T, L>(
  work: Promise<T>,
  ms: number,
  late: (resolve: (value: L) => void, reject: (error: Error) => void) => void,
): Promise<T | L> {
  return new Promise<T | L>((resolve, reject) => {
    const timer = setTimeout(late, ms, resolve, reject);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * `work`, or the error `late` makes once `ms` passed first, as withDeadline; for the calls every request makes,
 * which mostly answer before the event loop turns (an in-memory store, a cache hit). The timer is armed only
 * for work still waiting when the current turn ends, with what is left of its `ms`: work that settles within
 * the turn costs no timer, and one setImmediate serves every call of the turn. `check` turns what the work
 * resolved into the answer (or throws why it is none), and `failed`, when given, turns any failure (the work's,
 * the check's, the deadline's) into an answer, both in the same reaction: no promise of the caller's per call.
 */
export function withinTurnOrDeadline<S, T = S>(
  work: Promise<S>,
  ms: number,
  late: () => Error,
  check?: (value: S) => T | PromiseLike<T>,
  failed?: (error: unknown) => T | PromiseLike<T>,
): Promise<T>;
/** The same, answered through `to` when it is given, and then without a promise of its own (undefined). */
export function withinTurnOrDeadline<S, T>(
  work: Promise<S>,
  ms: number,
  late: () => Error,
  check: (value: S) => T | PromiseLike<T>,
  failed: ((error: unknown) => T | PromiseLike<T>) | undefined,
  to: Answer<T> | undefined,
): Promise<T> | undefined;
export function withinTurnOrDeadline<S, T = S>(
  work: Promise<S>,
  ms: number,
  late: () => Error,
  check: (value: S) => T | PromiseLike<T> = (value) => value as unknown as T,
  failed?: (error: unknown) => T | PromiseLike<T>,
  to?: Answer<T>,
): Promise<T> | undefined {
  // The wait holds all its call's state, so each closure below holds only the wait.
  const now = Date.now();
  const wait = new Wait<S, T>(now + ms, late, check, failed, to);
  const answer = to
    ? undefined
    : new Promise<T>((resolve, reject) => {
        wait.resolve = resolve;
        wait.reject = reject;
      });
  // Asked again when the turn's setImmediate is long due: a test's fake timers uninstalled before it ran
  // would otherwise leave every later wait unarmed. One more in a long turn arms nothing twice.
  if (arming.length === 0 || now - armingSince > REARM_AFTER_MS) {
    armingSince = now;
    afterTurn(armStillWaiting);
  } else if (arming.length >= armingRoom) compactArming();
  arming.push(wait as Wait<unknown, unknown>);
  work.then(
    (value) => wait.answer(value),
    (error: unknown) => wait.fail(error),
  );
  return answer;
}

/** How a wait answers a caller that gave no promise to resolve: its value, or why there is none. */
export interface Answer<T> {
  settle(value: T): void;
  fail(error: unknown): void;
}

/** `answer` as it is without `to`; with it, passed on to `to` once here (a value at once). */
export function answerTo<T>(
  answer: T | PromiseLike<T>,
  to: Answer<T> | undefined,
): T | PromiseLike<T> | undefined {
  if (!to) return answer;
  if (!isThenable(answer)) to.settle(answer);
  else
    answer.then(
      (value) => to.settle(value),
      (error: unknown) => to.fail(error),
    );
  return undefined;
}

/** One withinTurnOrDeadline call: how its promise settles, by the work or once `dueAt` passed first. */
class Wait<S, T> {
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  settled = false;
  resolve: (answer: T | PromiseLike<T>) => void = noop;
  reject: (error: unknown) => void = noop;

  constructor(
    readonly dueAt: number,
    readonly late: () => Error,
    readonly check: (value: S) => T | PromiseLike<T>,
    readonly failed: ((error: unknown) => T | PromiseLike<T>) | undefined,
    readonly to: Answer<T> | undefined,
  ) {}

  answer(value: S): void {
    // Work that lands after the deadline changes nothing: the caller was answered then (`late` sees to it).
    if (this.settled) return;
    this.#settle();
    let answer: T | PromiseLike<T>;
    try {
      answer = this.check(value);
    } catch (error) {
      this.#failure(error);
      return;
    }
    this.#deliver(answer);
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.#settle();
    this.#failure(error);
  }

  /** The deadline passed first: a timer's callback, given the wait as its argument (no closure per wait). */
  static timedOut(wait: Wait<unknown, unknown>): void {
    wait.settled = true;
    wait.#failure(wait.late());
  }

  /** Rejected with `error`, or answered by `failed` when the caller gave it. */
  #failure(error: unknown): void {
    if (!this.failed) {
      if (this.to) this.to.fail(error);
      else this.reject(error);
      return;
    }
    let answer: T | PromiseLike<T>;
    try {
      answer = this.failed(error);
    } catch (failure) {
      if (this.to) this.to.fail(failure);
      else this.reject(failure);
      return;
    }
    this.#deliver(answer);
  }

  #deliver(answer: T | PromiseLike<T>): void {
    if (this.to) answerTo(answer, this.to);
    else this.resolve(answer);
  }

  #settle(): void {
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

const noop = (): void => undefined;

/** The waits begun in this turn of the event loop, armed together once it ends. */
let arming: Wait<unknown, unknown>[] = [];
/** The end of this turn of the event loop; a Worker or Deno has no setImmediate, and a 0 ms timer ends it too. */
const afterTurn: (run: () => void) => unknown =
  typeof globalThis.setImmediate === 'function' ? globalThis.setImmediate : (run) => setTimeout(run, 0);

/** When the setImmediate that arms `arming` was asked for. */
let armingSince = 0;
const REARM_AFTER_MS = 100;

/**
 * How many waits `arming` holds before the settled ones are dropped: a turn that runs many requests through
 * microtasks alone (receive() in a loop) would otherwise keep each of them alive until the turn ends.
 */
let armingRoom = 64;

function compactArming(): void {
  arming = arming.filter((wait) => !wait.settled);
  armingRoom = Math.max(64, arming.length * 2);
}

function armStillWaiting(): void {
  armingRoom = 64;
  const waits = arming;
  arming = [];
  const now = Date.now();
  for (const wait of waits) {
    if (!wait.settled) wait.timer = setTimeout(Wait.timedOut, Math.max(0, wait.dueAt - now), wait);
  }
}
