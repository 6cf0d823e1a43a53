/** What withTimeout resolves to when the time ran out before the work settled. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** `work`, or TIMED_OUT once `ms` passed first. The work itself goes on: a promise cannot be stopped. */
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

/** `work`, or an Error saying that `what` took too long once `ms` passed first; the work goes on (a write cannot be undone). */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const settled = await withTimeout(work, ms);
  if (settled === TIMED_OUT) throw new Error(`${what} took longer than ${ms} ms.`);
  return settled;
}
