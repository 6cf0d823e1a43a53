import { WebhookConfigError } from '../errors.js';

/** What a store operation rejects with once its deadline passed: the receiver answers 503 store_unavailable. */
export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

/** One operation's deadline, shared by its steps (connect, statements): the whole operation gets `ms`. */
export interface Deadline {
  /** `work`, or a StoreTimeoutError once the deadline passed (the work itself is not stopped). */
  within<T>(work: Promise<T>): Promise<T>;
  /** The operation ended: stops the timer. */
  end(): void;
}

/** The error of a store that passed its deadline; `cause` is the server's own timeout error, if it gave one. */
export function storeTimeout(store: string, ms: number, cause?: unknown): StoreTimeoutError {
  return new StoreTimeoutError(
    `${store} did not answer within ${ms} ms (operationTimeoutMs): the event was not processed and is ` +
      'answered 503, so the service retries it. Check that the store is reachable and not locked.',
    cause === undefined ? undefined : { cause },
  );
}

export function startDeadline(ms: number, store: string): Deadline {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(storeTimeout(store, ms)), ms);
  });
  // Between steps nobody races it: a deadline passing then is seen by the next step.
  expired.catch(() => {});
  return {
    within: (work) => Promise.race([work, expired]),
    end: () => clearTimeout(timer),
  };
}

/**
 * `work` within `ms`, else a StoreTimeoutError naming `store`. A claim that lands after its deadline only
 * leaves a lease nobody completes: it expires and the service's retry processes the event.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, store: string): Promise<T> {
  const deadline = startDeadline(ms, store);
  try {
    return await deadline.within(work);
  } finally {
    deadline.end();
  }
}

/** Validates an `operationTimeoutMs` option: a whole number of milliseconds, at least 1. Default 3000. */
export function operationTimeout(store: string, value: number | undefined): number {
  if (value === undefined) return 3000;
  if (!Number.isInteger(value) || value < 1) {
    throw new WebhookConfigError(
      `new ${store}({ operationTimeoutMs }): operationTimeoutMs must be a whole number of milliseconds (at least 1), got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}.`,
    );
  }
  return value;
}
