import { WebhookConfigError } from '../base/errors.js';
import type { MessageTracker } from './tracker.js';

/** The receiver's `tracker` option: a tracker from createMessageTracker, or a clear refusal at creation. */
export function checkTracker(tracker: unknown): MessageTracker | undefined {
  if (tracker === undefined) return undefined;
  if (typeof (tracker as Partial<MessageTracker> | null)?.observeEvent !== 'function') {
    throw new WebhookConfigError(
      'tracker must be a message tracker: createReceiver({ …, tracker: createMessageTracker({ store }) }).',
    );
  }
  return tracker as MessageTracker;
}

type DispatchNow<C> = (event: { type: string }, ctx: C) => Promise<void> | undefined;

/**
 * The handlers, so that once those of a `message.*` event succeeded its message's status moves. Only then: a
 * failed handler leaves the status where it was, and the service's retry brings the event back; a status store
 * that fails fails the delivery, so the retry records it; a copy changes nothing. `dispatchNow` is the one
 * call both a request and a durable worker run handlers through, so both are tracked.
 */
export function trackHandled<H extends { dispatchNow: DispatchNow<never> }>(
  handlers: H,
  tracker: MessageTracker | undefined,
): H {
  if (tracker === undefined) return handlers;
  const dispatchNow = handlers.dispatchNow.bind(handlers) as DispatchNow<unknown>;
  const track = (event: { type: string }) => tracker.observeEvent(event).then(() => undefined);
  const tracked: DispatchNow<unknown> = (event, ctx) => {
    const ran = dispatchNow(event, ctx);
    if (!event.type.startsWith('message.')) return ran;
    return ran ? ran.then(() => track(event)) : track(event);
  };
  handlers.dispatchNow = tracked;
  return handlers;
}
