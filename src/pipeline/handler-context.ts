import type { DeliveryContext, HandlerContext } from '../contract/context.js';
import type { Verified } from './3-verify.js';

export type { DeliveryContext };

/**
 * The one place a handler's context is built from a verified delivery, so the direct path and the job a
 * worker runs carry the same fields (a durable job keeps it as JSON: only fields that are set appear).
 */
export function deliveryContext(verified: Verified, dedupeKey: string): DeliveryContext {
  const context: DeliveryContext = {
    requestId: verified.requestId,
    mode: verified.mode,
    timestamp: verified.timestamp,
    dedupeKey,
  };
  if (verified.messageId !== undefined) context.messageId = verified.messageId;
  if (verified.tenant !== undefined) context.tenant = verified.tenant;
  return context;
}

/** The context a handler run gets: the delivery's, with the store's transaction (a literal: no spread per run). */
export function withTransaction<Tx>(context: DeliveryContext, tx: Tx): Omit<HandlerContext<Tx>, 'attempt'> {
  const { requestId, mode, timestamp, dedupeKey, messageId, tenant } = context;
  return { requestId, mode, timestamp, dedupeKey, messageId, tenant, tx };
}
