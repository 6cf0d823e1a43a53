import { type Poller, startPoller } from '../base/poller.js';
import type { DurableQueueCounts } from './port.js';

export const COUNTS_INTERVAL_MS = 5000;

/**
 * Keeps the last counts read from an engine, for a synchronous metrics(): the first read starts a timer
 * that reads again every `intervalMs`, unref'd so it never keeps the process alive. A failed read keeps the
 * previous counts (their readAt tells how old they are).
 */
export function countsPoller(read: () => Promise<Omit<DurableQueueCounts, 'readAt'>>, intervalMs: number) {
  let last: DurableQueueCounts | undefined;
  let poller: Poller | undefined;
  const poll = async () => {
    try {
      last = { ...(await read()), readAt: Date.now() };
    } catch {
      // The engine is unreachable right now: the next poll tries again, enqueue reports the outage.
    }
  };
  return {
    counts(): DurableQueueCounts | undefined {
      poller ??= startPoller(poll, intervalMs, { immediately: true });
      return last;
    },
    stop(): void {
      poller?.stop();
    },
  };
}
