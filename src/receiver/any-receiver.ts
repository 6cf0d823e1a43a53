import type { Receiver } from './receiver.js';

/** What every framework adapter mounts: a receiver of any catalogue and store (adapters only move bytes). */
// biome-ignore lint/suspicious/noExplicitAny: the catalogue and transaction types do not matter to an adapter
export type AnyReceiver = Receiver<any, any>;

/**
 * A receiver, or a function that creates it at the first request. A factory keeps configuration out of
 * module scope: `next build` imports every route with no secret in its environment, and a Worker's secrets
 * only exist once a request runs.
 */
export type ReceiverSource = AnyReceiver | (() => AnyReceiver);
