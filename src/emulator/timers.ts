/**
 * The emulator's waits (lifecycle steps, retry backoffs, chaos delays) in one place, so that closing it
 * cancels them all: nothing keeps the process alive after `close()`.
 */
export class Timers {
  private readonly pending = new Map<ReturnType<typeof setTimeout>, (live: boolean) => void>();
  private closed = false;

  /** Resolves true after `ms`, or false at once when the emulator closes. */
  wait(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        resolve(true);
      }, ms);
      this.pending.set(timer, resolve);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
    for (const [timer, resolve] of this.pending) {
      clearTimeout(timer);
      resolve(false);
    }
    this.pending.clear();
  }
}

/** Deliveries to a paused endpoint wait here until it is resumed. */
export class Gate {
  private waiters: (() => void)[] = [];
  paused = false;

  async pass(): Promise<void> {
    while (this.paused) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  set(paused: boolean): void {
    this.paused = paused;
    if (paused) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
