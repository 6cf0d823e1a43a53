/** How long after a 429 a request may still arrive that was sent before it. */
const IN_FLIGHT_MS = 50;

/**
 * The quota of a mode: `requests` per key in each fixed window of `windowSeconds`. Past it, how many
 * seconds until the window turns is what the client is told to wait.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number; toldAt: number | undefined }>();
  /** Requests sent while a wait this limiter told the same key had not passed: a client that broke it. */
  early = 0;

  constructor(private readonly limit: { requests: number; windowSeconds: number }) {}

  /** 0 when the request may go ahead, else the seconds to wait. */
  take(key: string, now = Date.now()): number {
    const windowMs = this.limit.windowSeconds * 1000;
    let window = this.windows.get(key);
    if (!window || now - window.start >= windowMs) {
      window = { start: now, count: 0, toldAt: undefined };
      this.windows.set(key, window);
    }
    if (window.count < this.limit.requests) {
      window.count++;
      return 0;
    }
    // A request already on its way when the 429 went out is no broken wait: only one sent well after it.
    if (window.toldAt !== undefined && now - window.toldAt > IN_FLIGHT_MS) this.early++;
    window.toldAt ??= now;
    return Math.max(1, Math.ceil((window.start + windowMs - now) / 1000));
  }
}
