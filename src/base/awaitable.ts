/**
 * The one seam for waiting. A value that is here now goes on at once; one that comes later is a native promise
 * from here on, whatever kind of thenable it came as (Bluebird, an instrumentation wrapper, any Promises/A+
 * object). Why the fast path: each promise costs a turn of the microtask queue and a lookup of `then` on what
 * it resolves with, on every request; an in-memory store, a handler that returns nothing and a body already
 * buffered answer at once (see docs/development.md, "Waiting").
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

/** `next(value)` now when the value is here, after it settles when it is a thenable (then a native promise). */
export function andThen<T, R>(value: Awaitable<T>, next: (value: T) => Awaitable<R>): Awaitable<R> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value);
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
