import type { SignedPiece } from '../base/bytes.js';
import type { ReceiveRequest } from '../contract/request.js';
import type { ErrorContext } from '../receiver/handlers.js';
import type { Mode } from '../signature/secrets.js';

/**
 * What the pipeline learned of one request so far: each stage reads what the stages before it wrote and adds
 * its own. The observer reads it too, for the log line of a rejection.
 */
export interface Delivery {
  readonly request: ReceiveRequest;
  readonly requestId: string;
  /** Once read: the raw body, exactly as received. */
  body?: SignedPiece;
  /** What the adapter handed over instead of bytes (a framework parsed the body first): named in the error. */
  notBytes?: unknown;
  /** Once verified. */
  mode?: Mode;
  timestamp?: number;
  /** Once verified, for a profile that signs one: the delivery's message id. */
  messageId?: string;
  /** Once parsed. */
  event?: { type: string; id?: string };
  /** Once parsed: what onError is told of this event. */
  context?: ErrorContext;
}
