import type { Rejection } from './ending.js';

/** Requests past verification: close() waits for them, and refuses new ones once it started. */
export interface Admission {
  closing: boolean;
  enter(): void;
  leave(): void;
  /** Resolves once every admitted request was answered. */
  settled(): Promise<void>;
  /** Resolves 503 shutting_down once close() gave up waiting: every request still waiting answers it then. */
  readonly givenUp: Promise<Rejection>;
  /** close() gives up on the admitted requests still waiting. */
  giveUp(): void;
}

const SHUTTING_DOWN: Rejection = { stop: 'shutting_down' };

/** Counts verified requests not answered yet, so that close() resolves only after their answers. */
export function createAdmission(): Admission {
  let inside = 0;
  let idle: Promise<void> | undefined;
  let resolveIdle: (() => void) | undefined;
  let giveUp!: () => void;
  const givenUp = new Promise<Rejection>((resolve) => {
    giveUp = () => resolve(SHUTTING_DOWN);
  });
  return {
    closing: false,
    enter() {
      inside++;
    },
    leave() {
      inside--;
      if (inside === 0 && resolveIdle) {
        resolveIdle();
        idle = resolveIdle = undefined;
      }
    },
    settled(): Promise<void> {
      if (inside === 0) return Promise.resolve();
      idle ??= new Promise<void>((resolve) => {
        resolveIdle = resolve;
      });
      return idle;
    },
    givenUp,
    giveUp,
  };
}
