import type { ErrorCode } from '../base/errors.js';
import type { ErrorContext } from '../receiver/handlers.js';

/** Tells onError: one failure, one reason code, the same on the error and in its context. */
export type Report = (
  code: ErrorCode,
  message: string,
  cause: unknown,
  context: ErrorContext,
) => Promise<void>;
