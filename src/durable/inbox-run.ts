import { WebhookConfigError } from '../base/errors.js';
import { type Claim, Claims } from '../claims/claim.js';
import type { ErrorContext } from '../contract/context.js';
import { WebhookHandlerError } from '../contract/errors.js';
import type { DedupeStore } from '../stores/types.js';
import type { DispatchingReceiver } from './port.js';

export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_STORE_TIMEOUT_MS = 5000;
/** Longest pause between two claims of an event another run holds. */
const IN_FLIGHT_POLL_MS = 250;

export interface InboxOptions {
  store: DedupeStore<unknown>;
  leaseMs: number;
  retentionMs: number;
  /** How long one call to the store may take before it counts as failed. Default 5000. */
  storeTimeoutMs?: number;
}

/** The run of one job attempt, as far as the inbox needs it: whether the worker gave up on it. */
export interface InboxRun {
  gaveUp: boolean;
  claim?: Claim<unknown>;
}

/**
 * The receiver's claims on the worker's store: a job's handlers run inside the event's claim (and, on a
 * transactional store, in the transaction that records it done), so a second run of the same event, by an
 * engine that thought the first lost, finds it done and writes nothing.
 */
export function createInbox(receiver: DispatchingReceiver, options: InboxOptions): Claims<unknown> {
  const { store } = options;
  if (
    typeof store?.claim !== 'function' ||
    typeof store.complete !== 'function' ||
    typeof store.release !== 'function'
  ) {
    throw new WebhookConfigError(
      'store must be a DedupeStore (new PostgresDedupeStore({ pool, transactional: true }) for exactly-once effects).',
    );
  }
  return new Claims({
    store,
    leaseMs: options.leaseMs,
    retentionMs: options.retentionMs,
    storeTimeoutMs: options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
    // A failed handler is the job's failure, told once it is dead-lettered; the store's own trouble is told now.
    report: async (code, message, cause, context) => {
      if (code === 'handler_failed') return;
      await receiver.reportError(
        new WebhookHandlerError(code, message, cause === undefined ? undefined : { cause }),
        { ...context, reason: code },
      );
    },
  });
}

/**
 * Runs `handle` once the event's claim is held: done at once when the event is already processed, waits
 * while another run holds it (then finds it done, or claims it after that run failed).
 */
export async function runInInbox(
  claims: Claims<unknown>,
  key: string,
  context: ErrorContext,
  handle: (tx: unknown) => Promise<void> | undefined,
  run: InboxRun,
): Promise<void> {
  let handlerError: unknown;
  const capture = (tx: unknown) =>
    handle(tx)?.catch((error: unknown) => {
      handlerError = error;
      throw error;
    });
  while (!run.gaveUp) {
    const attempt = await claims.take(key, context, capture);
    if (attempt.status === 'duplicate') return;
    if (attempt.status === 'unavailable') {
      throw new WebhookHandlerError('store_unavailable', 'The dedupe store could not claim the event.');
    }
    if (attempt.status === 'in_flight') {
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt.retryAfterMs, IN_FLIGHT_POLL_MS)));
      continue;
    }
    const { claim } = attempt;
    run.claim = claim;
    if (run.gaveUp) {
      await claim.abandon();
      return;
    }
    const settled = await claim.run();
    if (settled.status !== 'failed') return;
    throw handlerError ?? new WebhookHandlerError('store_unavailable', 'The dedupe store failed.');
  }
}
