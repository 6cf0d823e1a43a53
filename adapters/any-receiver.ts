import type { Outcome } from '../src/adapter.js';
import { nextRequestId } from '../src/base/bytes.js';
import { rejectedOutcome } from '../src/contract/outcome.js';
import { receiveNow, receiveOf } from '../src/contract/receive-now.js';
import { type Receiver, WebhookConfigError } from '../src/index.js';

/** What every adapter mounts: a receiver of any catalogue and store (adapters only move bytes). */
// biome-ignore lint/suspicious/noExplicitAny: the catalogue and transaction types do not matter to an adapter
export type AnyReceiver = Receiver<any, any>;

/**
 * A receiver, or a function that creates it at the first request. A factory keeps configuration out of
 * module scope: `next build` imports every route with no secret in its environment, and a Worker's secrets
 * only exist once a request runs.
 */
export type ReceiverSource = AnyReceiver | (() => AnyReceiver);

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
