/** Requests past verification: close() waits for them, and refuses new ones once it started. */
export interface Admission {
  closing: boolean;
  enter(): void;
  leave(): void;
  /** Resolves once every admitted request was answered. */
  settled(): Promise<void>;
}

/** Counts verified requests not answered yet, so that close() resolves only after their answers. */
export function createAdmission(): Admission {
  let inside = 0;
  let idle: (() => void) | undefined;
  return {
    closing: false,
    enter() {
      inside++;
    },
    leave() {
      inside--;
      if (inside === 0) idle?.();
    },
    settled(): Promise<void> {
      if (inside === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
  };
}
