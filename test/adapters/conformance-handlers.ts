import type { Receiver } from '../../src/index.js';

export const SECRET = 'whsec_conformance_secret';
export const MAX_BODY_BYTES = 64 * 1024;
/** The handler throws the first time it sees an event whose data.operator is this → 500 handler_failed. */
export const FAILING_OPERATOR = 'op_fail';
/** The handler waits 300 ms, so a concurrent delivery of the same event sees 409 event_in_progress. */
export const SLOW_OPERATOR = 'op_slow';
const SLOW_MS = 300;

export interface HandledEvent {
  id?: string;
  type: string;
  messageId?: string;
  to?: string;
}

/**
 * Registers the handlers every conformance target runs and returns what they saw. Takes the receiver, not
 * createReceiver, so that a runtime target can build it from the packed package while the in-process
 * targets build it from the sources.
 */
export function recordHandledEvents(receiver: Receiver): HandledEvent[] {
  const handled: HandledEvent[] = [];
  // Fails once per event id, so the service's retry (same event, new timestamp) is processed.
  const failedOnce = new Set<string | undefined>();
  receiver.on('message.delivered', async (event) => {
    if (event.data.operator === FAILING_OPERATOR && !failedOnce.has(event.id)) {
      failedOnce.add(event.id);
      throw new Error('conformance: handler failure the client must never see');
    }
    if (event.data.operator === SLOW_OPERATOR) await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    handled.push(record(event.id, event.type, event.data.message_id, event.data.to));
  });
  receiver.on('message.failed', (event) => {
    handled.push(record(event.id, event.type, event.data.message_id, event.data.to));
  });
  return handled;
}

function record(id: string | undefined, type: string, messageId?: string, to?: string): HandledEvent {
  const seen: HandledEvent = { type };
  if (id !== undefined) seen.id = id;
  if (messageId !== undefined) seen.messageId = messageId;
  if (to !== undefined) seen.to = to;
  return seen;
}
