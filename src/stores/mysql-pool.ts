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

/** What the store uses of mysql2's callback connection under a promise one. */
interface CallbackConnection {
  query(
    text: string,
    values: unknown[] | undefined,
    done: (error: unknown, result: unknown) => void,
  ): unknown;
}

/**
 * One of the store's own statements on a checked-out connection, through mysql2's callback connection under the
 * promise one: the promise API captures a stack per statement (its `trace` option, on by default), a cost that
 * grows with the awaits above the call, for errors whose stack the store never shows. Handlers' statements on
 * ctx.tx keep the promise API. A connection without a callback one underneath (a stand-in) is asked through its
 * own query().
 */
export function storeStatement<R>(connection: PoolConnection, text: string, values?: unknown[]): Promise<R> {
  const callback = (connection as { connection?: CallbackConnection }).connection;
  if (typeof callback?.query !== 'function')
    return connection.query(text, values).then(([result]) => result as R);
  return new Promise<R>((resolve, reject) => {
    callback.query(text, values, (error, result) => (error ? reject(error) : resolve(result as R)));
  });
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
