import type { RejectionDiagnostics } from './diagnostics.js';

/** What the receiver logs with: pino, or any object with these three methods (pino's argument order). */
export interface Logger {
  info(fields: object, message: string): unknown;
  warn(fields: object, message: string): unknown;
  error(fields: object, message: string): unknown;
}

/** The one structured line written per request. Never a secret, a signature or a body. */
export interface RequestLogFields {
  requestId: string;
  status: number;
  /** `processed`, `duplicate`, `accepted` or the reason code of a rejection. */
  outcome: string;
  reason?: string;
  eventId?: string;
  eventType?: string;
  mode?: string;
  durationMs: number;
  /** Rejections only: what the operator needs to tell a misconfiguration from an attack. */
  diagnostics?: RejectionDiagnostics;
}

/** info for 2xx, warn for 4xx (the sender's problem), error for 5xx (ours). */
export function writeRequestLog(logger: Logger, fields: RequestLogFields): void {
  const message =
    fields.reason === undefined ? `webhook ${fields.outcome}` : `webhook rejected: ${fields.reason}`;
  try {
    if (fields.status >= 500) logger.error(fields, message);
    else if (fields.status >= 400) logger.warn(fields, message);
    else logger.info(fields, message);
  } catch {
    // A failing logger must not turn a decided outcome into a crash; there is nowhere left to report it.
  }
}
