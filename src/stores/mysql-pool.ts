import type { Pool, PoolConnection } from 'mysql2/promise';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { StoreTimeoutError } from './deadline.js';
import { StoreUnavailableError } from './unavailable.js';

/** Errors of a MySQL/MariaDB that went away or cannot take writes (a failover, a restart, a read-only replica). */
const GONE = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ER_SERVER_SHUTDOWN',
  'ER_OPTION_PREVENTS_STATEMENT',
  'ER_READ_ONLY_MODE',
  'ER_CON_COUNT_ERROR',
]);

/** True when `error`, or one of its causes, says the server went away or cannot write. */
export function isMysqlFailover(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; depth++) {
    const { code, fatal } = cause as { code?: unknown; fatal?: unknown };
    if ((typeof code === 'string' && GONE.has(code)) || fatal === true) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** The error a transaction ends with: a lost connection is the store's failure (503), anything else passes on. */
export function mysqlFailedOver(error: unknown): unknown {
  if (error instanceof StoreTimeoutError || error instanceof StoreUnavailableError) return error;
  if (!isMysqlFailover(error)) return error;
  return new StoreUnavailableError(
    'The MySQL connection was lost or the server cannot take writes (a failover, a restart, a read-only ' +
      'replica): nothing of the event committed; it is answered 503 and retried.',
    { cause: error },
  );
}

/**
 * A `mysql2/promise` Pool. The callback pool of `mysql2` (its getConnection takes a callback) and a single
 * connection (no getConnection) are told apart, each with what to pass instead.
 */
export function checkMysqlPool(store: string, pool: unknown): Pool {
  const candidate = pool as Partial<Pool> & { promise?: unknown; connect?: unknown };
  const needs = `new ${store}({ pool }) needs pool: a Pool from \`mysql2/promise\` (mysql.createPool({ uri }))`;
  if (typeof candidate?.query !== 'function') throw new WebhookConfigError(`${needs}, got ${kindOf(pool)}.`);
  if (typeof candidate.promise === 'function') {
    throw new WebhookConfigError(
      `${needs}, got the callback API's pool (from \`mysql2\`): pass pool.promise(), or create it from \`mysql2/promise\`.`,
    );
  }
  if (typeof candidate.getConnection !== 'function') {
    const what =
      typeof candidate.connect === 'function' ? 'a pg Pool or Client' : 'a single connection, not a Pool';
    throw new WebhookConfigError(`${needs}, got ${what}: the store checks out a connection per operation.`);
  }
  return candidate as Pool;
}

/** A connection checked out within `within`; one that connects after the deadline is handed straight back. */
export async function checkOut(
  pool: Pool,
  within: <T>(work: Promise<T>) => Promise<T>,
): Promise<PoolConnection> {
  const connecting = pool.getConnection();
  try {
    return await within(connecting);
  } catch (error) {
    connecting.then(
      (late) => late.release(),
      () => {},
    );
    throw error;
  }
}

/** `work` on the connection within `within`; past the deadline the connection is destroyed, never reused. */
export async function onConnection<R>(
  connection: PoolConnection,
  within: <T>(work: Promise<T>) => Promise<T>,
  work: Promise<R>,
): Promise<R> {
  try {
    return await within(work);
  } catch (error) {
    if (error instanceof StoreTimeoutError) {
      work.catch(() => {});
      connection.destroy();
    }
    throw error;
  }
}
