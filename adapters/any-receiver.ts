import type { Receiver } from '../src/index.js';

/** What every adapter mounts: a receiver of any catalogue and store (adapters only move bytes). */
// biome-ignore lint/suspicious/noExplicitAny: the catalogue and transaction types do not matter to an adapter
export type AnyReceiver = Receiver<any, any>;
