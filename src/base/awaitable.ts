/**
 * User code in one shape. A value that is here now stays a value; one that comes later is a native promise
 * from here on, whatever kind of thenable it came as (Bluebird, an instrumentation wrapper, any Promises/A+
 * object). Stages that wait are async functions and await; the one place that goes on without a promise when
 * nothing waited is a handler's run (receiver/handlers.ts, runOne; see docs/development.md, "Waiting").
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
