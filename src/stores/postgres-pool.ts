import type { Pool, PoolClient } from 'pg';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { StoreTimeoutError } from './deadline.js';
import { isPostgresFailover, StoreUnavailableError } from './unavailable.js';

/**
 * A pooled client handed back once: released normally, or destroyed when its state is unknown. pg-pool takes
 * its own error listener off a client it hands out, and a pg client that loses its connection (a failover, a
 * restart, pg_terminate_backend) emits 'error': unheard, that crashes the process. So a checked-out client is
 * always heard here; a client that failed is destroyed on release, and the pool opens a fresh one.
 */
export class Checkout {
  #released = false;
  /** The error the connection failed with while checked out, if it did. */
  lost: Error | undefined;
  readonly #onError = (error: Error) => {
    this.lost ??= error;
  };
  constructor(readonly client: PoolClient) {
    client.on('error', this.#onError);
  }
  release(broken?: Error): void {
    if (this.#released) return;
    this.#released = true;
    this.client.off('error', this.#onError);
    this.client.release(broken ?? this.lost);
  }
}

/**
 * The error a transaction ends with: a lost connection or a failing-over server is the store's failure (503
 * with Retry-After), whatever the handler that met it threw; anything else is passed on as it is.
 */
export function failedOver(checkout: Checkout, error: unknown): unknown {
  if (error instanceof StoreTimeoutError || error instanceof StoreUnavailableError) return error;
  if (!checkout.lost && !isPostgresFailover(error)) return error;
  return new StoreUnavailableError(
    'The PostgreSQL connection was lost or the server cannot take writes (a failover, a restart, a standby): ' +
      'nothing of the event committed; it is answered 503 and retried, and the pool opens a new connection.',
    { cause: error },
  );
}

/** A pg Client has query and connect too, but connect() resolves no client to check out. */
export function checkPool(pool: unknown): Pool {
  const candidate = pool as Partial<Pool> | undefined;
  if (typeof candidate?.query !== 'function' || typeof candidate.connect !== 'function') {
    throw new WebhookConfigError(
      `new PostgresDedupeStore({ pool }) needs pool: a Pool from the \`pg\` package (new pg.Pool({ connectionString })), got ${kindOf(pool)}.`,
    );
  }
  if (typeof candidate.totalCount !== 'number') {
    throw new WebhookConfigError(
      'new PostgresDedupeStore({ pool }) got a single connection (a pg Client), not a Pool: pass new pg.Pool({ connectionString }); the store checks out a connection per operation.',
    );
  }
  return candidate as Pool;
}
