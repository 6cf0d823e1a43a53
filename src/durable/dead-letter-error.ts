// The error a DeadLetters call rejects with, in a file of its own: the root entry exports the class, and the
// dead-letter code itself is loaded only by the entries of the job engines that have dead letters.

/** Why an engine call of DeadLetters failed: the engine did not answer in time, or answered with an error. */
export type DeadLetterErrorCode = 'engine_timeout' | 'engine_unavailable' | 'queue_not_found';

/** A DeadLetters call the engine did not carry out: its code says why, its message what to check. */
export class DeadLetterError extends Error {
  override name = 'DeadLetterError';
  /** engine_timeout, engine_unavailable or queue_not_found. */
  readonly code: DeadLetterErrorCode;
  constructor(code: DeadLetterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
