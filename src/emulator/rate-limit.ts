/**
 * The quota of a mode: `requests` per key in each fixed window of `windowSeconds`. Past it, how many
 * seconds until the window turns is what the client is told to wait.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly limit: { requests: number; windowSeconds: number }) {}

  /** 0 when the request may go ahead, else the seconds to wait. */
  take(key: string, now = Date.now()): number {
    const windowMs = this.limit.windowSeconds * 1000;
    let window = this.windows.get(key);
    if (!window || now - window.start >= windowMs) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count < this.limit.requests) {
      window.count++;
      return 0;
    }
    return Math.max(1, Math.ceil((window.start + windowMs - now) / 1000));
  }
}
