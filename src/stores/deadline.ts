import { TIMED_OUT, withTimeout } from '../base/deadline.js';
import { option, rules } from '../base/options.js';

/** What a store operation rejects with once its deadline passed: the receiver answers 503 store_unavailable. */
export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

/** One operation's deadline, shared by its steps (connect, statements): the whole operation gets `ms`. */
export interface Deadline {
  /** `work`, or a StoreTimeoutError once the deadline passed (the work itself is not stopped). */
  within<T>(work: Promise<T>): Promise<T>;
  /** Milliseconds until the deadline (0 once it passed). */
  remainingMs(): number;
}

/** The error of a store that passed its deadline; `cause` is the server's own timeout error, if it gave one. */
export function storeTimeout(store: string, ms: number, cause?: unknown): StoreTimeoutError {
  return new StoreTimeoutError(
    `${store} did not answer within ${ms} ms (operationTimeoutMs): the event was not processed and is ` +
      'answered 503, so the service retries it. Check that the store is reachable and not locked.',
    cause === undefined ? undefined : { cause },
  );
}

function startDeadline(ms: number, store: string, named: number): Deadline {
  const end = performance.now() + ms;
  const remainingMs = () => Math.max(0, end - performance.now());
  return {
    async within(work) {
      const settled = await withTimeout(work, remainingMs());
      if (settled === TIMED_OUT) throw storeTimeout(store, named);
      return settled;
    },
    remainingMs,
  };
}

/**
 * A deadline of `ms` from now for steps that each bound themselves (`within`), with no wrapper of its own around
 * them: one timer per step, where withinOperationTimeout adds one for the whole operation.
 */
export function operationDeadline(ms: number, store: string): Deadline {
  return startDeadline(ms, store, ms);
}

/**
 * One operation within `ms`, else a StoreTimeoutError naming `store` and `operationTimeoutMs` (the option's
 * value, when `ms` is what is left of it). The operation gets its deadline, to bound each step by what is left
 * of it; past it the operation's steps are not stopped, so a store makes sure that nothing it sent lands
 * afterwards as a claim nobody owns.
 */
export function withinOperationTimeout<T>(
  ms: number,
  store: string,
  operation: (deadline: Deadline) => Promise<T>,
  operationTimeoutMs = ms,
): Promise<T> {
  const deadline = startDeadline(ms, store, operationTimeoutMs);
  return deadline.within(operation(deadline));
}

/** Validates an `operationTimeoutMs` option: a whole number of milliseconds, at least 1. Default 3000. */
export function operationTimeout(store: string, value: number | undefined): number {
  const rule = rules.whole({ min: 1, unit: 'milliseconds' });
  return option('operationTimeoutMs', value, 3000, rule, `new ${store}({ operationTimeoutMs }): `);
}
