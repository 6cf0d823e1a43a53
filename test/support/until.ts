export interface UntilOptions {
  /** Give up after this many ms (default 20 000, within the suite's 30 s test timeout). */
  timeoutMs?: number;
  /** What is awaited, for the timeout's message (default: the condition's source). */
  what?: string;
  /**
   * Subscribes to the changes that can make the condition true (returns its unsubscribe): the condition is
   * then checked on each change instead of polled.
   */
  changes?: (listener: () => void) => () => void;
}

/**
 * Waits for a condition something else makes true a little later (a queue's count, a job's state, a port
 * closed), with a deadline. Polled from every 2 ms (a state in this process) up to every 100 ms (a state in
 * Redis, PostgreSQL or another process), or checked on each change when `changes` is given.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  limit: number | UntilOptions = {},
): Promise<void> {
  const { timeoutMs = 20_000, what, changes } = typeof limit === 'number' ? { timeoutMs: limit } : limit;
  const deadline = Date.now() + timeoutMs;
  let pauseMs = 2;
  while (!(await condition())) {
    const leftMs = deadline - Date.now();
    if (leftMs <= 0)
      throw new Error(`Waited ${timeoutMs} ms for ${what ?? String(condition)}: still not true.`);
    await nextCheck(changes ? leftMs : Math.min(pauseMs, leftMs), changes);
    pauseMs = Math.min(pauseMs * 2, 100);
  }
}

/** Resolves after `ms`, or at the next change when there is a subscription. */
function nextCheck(ms: number, changes: UntilOptions['changes']): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = changes ? changes(done) : () => {};
  });
}
