import { WebhookConfigError } from '../base/errors.js';
import { type Outcome, rejectedOutcome } from '../contract/outcome.js';
import type { RequestReceiver } from '../contract/request.js';
import { nextRequestId } from '../pipeline/1-read-verify.js';
import type { Receiver } from './receiver.js';

/** What every adapter mounts: a receiver of any catalogue and store (adapters only move bytes). */
// biome-ignore lint/suspicious/noExplicitAny: the catalogue and transaction types do not matter to an adapter
export type AdapterReceiver = Receiver<any, any>;

/**
 * A receiver, or a function that creates it at the first request. A factory keeps configuration out of
 * module scope: `next build` imports every route with no secret in its environment, and a Worker's secrets
 * only exist once a request runs.
 */
export type ReceiverSource = AdapterReceiver | (() => AdapterReceiver);

/**
 * Resolves a factory once, at the first request. Until it succeeds, every request is answered
 * 500 receiver_misconfigured in the service's error shape, and the reason is printed on the server.
 */
export function receiverAtFirstRequest(source: ReceiverSource): RequestReceiver {
  if (typeof source !== 'function') return source;
  let receiver: AdapterReceiver | undefined;
  return {
    receive(request) {
      if (receiver === undefined) {
        try {
          receiver = source();
        } catch (error) {
          return Promise.resolve(misconfigured(error));
        }
      }
      return receiver.receive(request);
    },
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
