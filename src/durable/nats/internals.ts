import { WebhookConfigError } from '../../base/errors.js';
import type { LedgerQueueParts } from '../ledger/queue.js';
import type { NatsBroker } from './broker.js';

/** What the workers and dead letters use of a queue, kept off its public face. */
export interface NatsInternals extends LedgerQueueParts {
  broker: NatsBroker;
}

export const internals = new WeakMap<object, NatsInternals>();

/** The internals of a queue natsQueue(…) made; a configuration error for anything else. */
export function natsInternals(queue: unknown, who: string): NatsInternals {
  const found = typeof queue === 'object' && queue !== null ? internals.get(queue) : undefined;
  if (!found) {
    throw new WebhookConfigError(
      `${who} needs \`queue\`: the queue natsQueue(…) made, which the receiver uses.`,
    );
  }
  return found;
}
