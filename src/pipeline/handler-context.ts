import type { HandlerContext } from '../receiver/handlers.js';
import type { Mode } from '../signature/secrets.js';
import type { Delivery } from './delivery.js';

/** What a verified delivery tells its handlers, wherever they run: the receiver itself or a durable worker. */
export type DeliveryContext = Omit<HandlerContext<undefined>, 'tx' | 'attempt'>;

/**
 * The one place a handler's context is built from a verified delivery, so the direct path and the job a
 * worker runs carry the same fields (a durable job keeps it as JSON: only fields that are set appear).
 */
export function deliveryContext(delivery: Delivery, mode: Mode, dedupeKey: string): DeliveryContext {
  const context: DeliveryContext = {
    requestId: delivery.requestId,
    mode,
    timestamp: delivery.timestamp as number,
    dedupeKey,
  };
  if (delivery.messageId !== undefined) context.messageId = delivery.messageId;
  return context;
}
