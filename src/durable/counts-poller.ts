import type { DurableQueueCounts } from './port.js';

export const COUNTS_INTERVAL_MS = 5000;

/**
 * Keeps the last counts read from an engine, for a synchronous metrics(): the first read starts a timer
 * that reads again every `intervalMs`, unref'd so it never keeps the process alive. A failed read keeps the
 * previous counts (their readAt tells how old they are).
 */
export function countsPoller(read: () => Promise<Omit<DurableQueueCounts, 'readAt'>>, intervalMs: number) {
  let last: DurableQueueCounts | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let reading = false;
  const poll = async () => {
    if (reading) return;
    reading = true;
    try {
      last = { ...(await read()), readAt: Date.now() };
    } catch {
      // The engine is unreachable right now: the next poll tries again, enqueue reports the outage.
    } finally {
      reading = false;
    }
  };
  return {
    counts(): DurableQueueCounts | undefined {
      if (!timer) {
        timer = setInterval(poll, intervalMs);
        (timer as { unref?: () => void }).unref?.();
        void poll();
      }
      return last;
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}
