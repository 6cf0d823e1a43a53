/** A poller started by startPoller: stop() ends it. */
export interface Poller {
  stop(): void;
}

/**
 * Runs `poll` every `intervalMs` (and once at once with `immediately`), on a timer that never keeps the process
 * alive. A poll still running when the next is due is not started again, so a slow engine never piles reads up.
 * A poll handles its own failures; one it lets through is dropped, and the next poll tries again.
 */
export function startPoller(
  poll: () => unknown,
  intervalMs: number,
  options: { immediately?: boolean } = {},
): Poller {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    Promise.resolve()
      .then(poll)
      .catch(() => {})
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  if (options.immediately) tick();
  return { stop: () => clearInterval(timer) };
}
