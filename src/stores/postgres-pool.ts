import type { Pool, PoolClient } from 'pg';
import { kindOf, WebhookConfigError } from '../base/errors.js';

/** A pooled client handed back once: released normally, or destroyed when its state is unknown. */
export class Checkout {
  #released = false;
  constructor(readonly client: PoolClient) {}
  release(broken?: Error): void {
    if (this.#released) return;
    this.#released = true;
    this.client.release(broken);
  }
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
