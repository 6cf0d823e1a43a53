import type { AnyReceiver, Outcome, ReceiverSource } from '../src/adapter.js';
import { nextRequestId } from '../src/base/bytes.js';
import { rejectedOutcome } from '../src/contract/outcome.js';
import { receiveNow, receiveOf } from '../src/contract/receive-now.js';
import { WebhookConfigError } from '../src/index.js';

export type { AnyReceiver, ReceiverSource };

/** The one part of a receiver the request adapters use. */
export type RequestReceiver = Pick<AnyReceiver, 'receive'>;

/**
 * Resolves a factory once, at the first request. Until it succeeds, every request is answered
 * 500 receiver_misconfigured in the service's error shape, and the reason is printed on the server.
 */
export function receiverAtFirstRequest(source: ReceiverSource): RequestReceiver {
  if (typeof source !== 'function') return source;
  let receiver: AnyReceiver | undefined;
  return {
    receive: receiveOf((request) => {
      if (receiver === undefined) {
        try {
          receiver = source();
        } catch (error) {
          return misconfigured(error);
        }
      }
      return receiveNow(receiver, request);
    }),
  };
}

function misconfigured(error: unknown): Outcome {
  const outcome = rejectedOutcome('receiver_misconfigured', nextRequestId(), {
    // A configuration error says what to fix and holds no secret; any other error may hold anything.
    ...(error instanceof WebhookConfigError
      ? { message: `The webhook receiver could not be created: ${error.message}` }
      : {}),
  });
  console.error(`messaging-webhooks [${outcome.requestId}] receiver_misconfigured:`, error);
  return outcome;
}
