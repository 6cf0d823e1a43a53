import type { ErrorContext } from '../contract/context.js';
import type { ErrorCode } from '../contract/errors.js';

/** Tells onError: one failure, one reason code, the same on the error and in its context. */
export type Report = (
  code: ErrorCode,
  message: string,
  cause: unknown,
  context: ErrorContext,
) => Promise<void>;
