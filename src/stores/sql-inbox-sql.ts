import { WebhookConfigError } from '../base/errors.js';
import { type MysqlStatements, mysqlStoredKey, notClaimed } from './mysql-sql.js';
import type { ClaimInTransaction } from './open-claim.js';
import { claimSql, completeSql, type InboxTable, inboxTable, storedKey } from './postgres-sql.js';
import type { ClaimResult, OpenClaimResult } from './types.js';

/**
 * The claim with its commit not waiting for the WAL flush (synchronous_commit off for its transaction only): the
 * event's transaction commits durably after it, flushing the WAL this claim is in. A claim lost to a crash of the
 * server before that loses nothing: the completion in the event's transaction then matches no row, rolls back
 * with the handlers' writes, and the retry claims the event again. One flush per delivery, as by hand.
 */
export function lazilyFlushedClaim(claim: string): string {
  const lazy = claim
    .replace(/^WITH /, "WITH lazy AS (SELECT set_config('synchronous_commit', 'off', true)),\n")
    .replace('FROM (SELECT 1) AS one LEFT JOIN', 'FROM lazy AS one LEFT JOIN');
  if (lazy === claim || !lazy.includes('FROM lazy AS one'))
    throw new Error('The PostgreSQL claim changed shape.');
  return lazy;
}

export function checkedPgTable(store: string, table: string) {
  try {
    return inboxTable(table);
  } catch {
    throw new WebhookConfigError(
      `new ${store}({ table }): table must be letters, digits and underscores (not starting with a digit, at most 48), got ${JSON.stringify(table)}.`,
    );
  }
}

/** How long a MariaDB claim waits for a row another transaction holds before answering in flight (seconds). */
const MYSQL_LOCK_WAIT_S = 1;

/**
 * The PostgreSQL claim of its own (one statement, committed at once). A claim held by an open transaction
 * (claimInTransaction) is uncommitted, so its row lock would make this INSERT wait for that whole run: every
 * claim first takes a transaction-scoped advisory lock on the key without waiting, and a key whose lock is taken
 * is in flight at once. Otherwise a row is held for one statement only, so the INSERT never waits long.
 */
export function pgClaimSql(table: InboxTable): string {
  const claim = claimSql(table);
  const held = claim
    .replace(
      /^WITH claimed AS \(/,
      `WITH lock AS (SELECT ${keyLock(table)} AS free),
claimed AS (`,
    )
    .replace(
      /VALUES \((\$1::text, 'processing', \$2::text, [^\n]*)\)\n/,
      'SELECT $1 FROM lock WHERE lock.free\n',
    )
    .replace("THEN 'claimed'", "THEN 'claimed'\n    WHEN NOT (SELECT free FROM lock) THEN 'in_flight'");
  if (held === claim || !held.includes('FROM lock WHERE') || !held.includes('NOT (SELECT free'))
    throw new Error('The PostgreSQL claim changed shape.');
  return held;
}

const keyLock = ({ name }: InboxTable) =>
  `pg_try_advisory_xact_lock(hashtextextended('${name}:' || $1::text, 0))`;

/**
 * The PostgreSQL claim inside the event's transaction, under the key's advisory lock (as pgClaimSql). A new key
 * is taken by `insert`, a plain `INSERT … ON CONFLICT DO NOTHING` as by hand, which PostgreSQL parses and plans
 * for less than the takeover's `DO UPDATE` (the statements go unnamed through some ORMs, planned every time).
 * Only when it took nothing, `takeOver` takes the key if its lease or retention ended and reads why not
 * otherwise, in one statement. Its `UPDATE` is under the key's lock too, so a key whose lock another transaction
 * holds is in flight at once, never waited on. The lease is an interval (`leaseInterval`), and so is the
 * retention of `complete`, the completion in the same transaction: PostgreSQL plans a cast to interval for less
 * than the raw-driver store's milliseconds times an interval.
 */
export function pgClaimInTransaction(table: InboxTable) {
  const until = `now() + $3::interval`;
  return {
    insert: `INSERT INTO ${table.ref} (key, state, token, expires_at)
SELECT $1::text, 'processing', $2::text, ${until} WHERE ${keyLock(table)}
ON CONFLICT DO NOTHING`,
    takeOver: `WITH taken AS (
  UPDATE ${table.ref} SET state = 'processing', token = $2::text, expires_at = ${until}, updated_at = now()
  WHERE key = $1::text AND expires_at <= now() AND ${keyLock(table)}
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM taken) AS taken, state,
  ceil(extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms
FROM ${table.ref} WHERE key = $1::text`,
    complete: completeSql(table, until),
  };
}

/** A lease or retention in milliseconds as the PostgreSQL interval the in-transaction claim takes. */
export const leaseInterval = (ms: number): string => `${ms} milliseconds`;

/**
 * A prepared statement's name for `text`: the same on every process for the same text, another for another
 * (the table is in the text), within PostgreSQL's 63 bytes. A driver refuses one name for two texts on one
 * connection, so a clash of this hash fails loudly rather than running the wrong statement.
 */
export function statementName(text: string, prefix = 'mw_inbox'): string {
  // FNV-1a, 32 bits twice (two offsets): a name per text without node:crypto, which edge runtimes lack.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return `${prefix}_${(a >>> 0).toString(16)}${(b >>> 0).toString(16)}`;
}

/** The MySQL statements of a claim run inside the event's transaction: no wait longer than a second. */
export function mysqlClaimInTransaction(sql: MysqlStatements) {
  const bounded = (statement: string) =>
    `SET STATEMENT innodb_lock_wait_timeout = ${MYSQL_LOCK_WAIT_S} FOR ${statement}`;
  return { insert: bounded(sql.insert), takeOver: bounded(sql.takeOver), read: sql.read };
}

type Run = (
  text: string,
  values: unknown[],
) => Promise<{ rows: Array<Record<string, unknown>>; affected: number }>;

/** The claim's statements on the open transaction (`run`), and what they say. */
export async function claimOnTransaction(
  dialect: 'postgres' | 'mysql',
  text: {
    pg?: string | undefined;
    pgInTransaction?: ReturnType<typeof pgClaimInTransaction> | undefined;
    mysql?: ReturnType<typeof mysqlClaimInTransaction> | undefined;
  },
  run: Run,
  key: string,
  token: string,
  leaseMs: number,
): Promise<ClaimInTransaction> {
  try {
    if (text.pgInTransaction) {
      const { insert, takeOver } = text.pgInTransaction;
      const values = [storedKey(key), token, leaseInterval(leaseMs)];
      if ((await run(insert, values)).affected === 1) return { status: 'claimed' };
      const row = (await run(takeOver, values)).rows[0];
      // Taken over: the snapshot's row is the lapsed one the statement replaced.
      if (row?.taken === true) return { status: 'claimed' };
      return notClaimed(row, leaseMs);
    }
    if (dialect === 'postgres') {
      const { rows } = await run(text.pg as string, [storedKey(key), token, leaseMs]);
      const row = rows[0] as { status?: unknown; retry_after_ms?: unknown } | undefined;
      if (row?.status === 'claimed') return { status: 'claimed' };
      if (row?.status === 'duplicate') return { status: 'duplicate' };
      return notClaimed({ left_ms: row?.retry_after_ms }, leaseMs);
    }
    const sql = text.mysql as ReturnType<typeof mysqlClaimInTransaction>;
    const stored = mysqlStoredKey(key);
    if ((await run(sql.insert, [stored, token, leaseMs])).affected === 1) return { status: 'claimed' };
    if ((await run(sql.takeOver, [token, leaseMs, stored])).affected === 1) return { status: 'claimed' };
    return notClaimed((await run(sql.read, [stored])).rows[0], leaseMs);
  } catch (error) {
    // Another transaction holds the key's row: the event is in flight there.
    if (lockedElsewhere(error)) return { status: 'in_flight', retryAfterMs: leaseMs };
    throw error;
  }
}

const LOCK_CODES = new Set(['ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', '55P03', '40P01', '1205', '1213']);
const LOCK_ERRNOS = new Set([1205, 1213]);

/** A lock wait that timed out or a deadlock, as the driver says it, through whatever the ORM wrapped it in. */
export function lockedElsewhere(error: unknown): boolean {
  return driverSaid(error, LOCK_CODES, LOCK_ERRNOS);
}

const PARSE_CODES = new Set(['ER_PARSE_ERROR', '1064']);
const PARSE_ERRNOS = new Set([1064]);

/** MySQL's parse error: the server has no `SET STATEMENT … FOR` (MySQL, not MariaDB). */
export function noSetStatement(error: unknown): boolean {
  return driverSaid(error, PARSE_CODES, PARSE_ERRNOS);
}

/** Whether a cause of `error` carries one of these codes: the driver's code or errno, or the ORM's originalCode. */
function driverSaid(error: unknown, codes: ReadonlySet<string>, errnos: ReadonlySet<number>): boolean {
  return someCause(error, (cause) => {
    const { code, errno, originalCode } = cause as {
      code?: unknown;
      errno?: unknown;
      originalCode?: unknown;
    };
    return codes.has(String(code)) || errnos.has(Number(errno)) || codes.has(String(originalCode));
  });
}

/** A MySQL-family store with the claim inside the event's transaction, and the calls its fallback takes. */
interface MysqlClaimer<Tx> {
  claimInTransaction?: ((key: string, leaseMs: number) => Promise<OpenClaimResult<Tx>>) | undefined;
  claim(key: string, leaseMs: number): Promise<ClaimResult>;
  transact?<R>(key: string, token: string, retentionMs: number, work: (tx: Tx) => Promise<R>): Promise<R>;
  release(key: string, token: string): Promise<boolean>;
}

/**
 * The claim inside the event's transaction (`opening`) on MariaDB. MySQL has no `SET STATEMENT`: there the store
 * drops claimInTransaction for good, and this claim and every later one is a statement of its own, committed
 * before the event's transaction (claim, then transact), answered as an open claim.
 */
export async function openMysqlClaim<Tx>(
  store: MysqlClaimer<Tx>,
  opening: () => Promise<OpenClaimResult<Tx>>,
  key: string,
  leaseMs: number,
): Promise<OpenClaimResult<Tx>> {
  try {
    return await opening();
  } catch (error) {
    const transact = store.transact?.bind(store);
    if (!transact || !noSetStatement(error)) throw error;
    store.claimInTransaction = undefined;
    const claimed = await store.claim(key, leaseMs);
    if (claimed.status !== 'claimed') return claimed;
    return {
      ...claimed,
      run: (retentionMs, work) => transact(key, claimed.token, retentionMs, work),
      abandon: async () => void (await store.release(key, claimed.token).catch(() => false)),
    };
  }
}

/** Whether `test` holds for the error or one it wraps (a cause, TypeORM's driverError, Prisma's adapter error). */
function someCause(error: unknown, test: (cause: object) => boolean): boolean {
  const seen: unknown[] = [error];
  for (let i = 0; i < seen.length && i < 12; i++) {
    const cause = seen[i];
    if (!cause || typeof cause !== 'object') continue;
    if (test(cause)) return true;
    const wrapped = cause as {
      cause?: unknown;
      driverError?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    const adapter = wrapped.meta?.driverAdapterError as { cause?: unknown } | undefined;
    seen.push(wrapped.cause, wrapped.driverError, adapter, adapter?.cause);
  }
  return false;
}

/** A driver's answer as pg (`{ rows, rowCount }`) or mysql2 (`[rows or header, fields]`) gives it, the ORM passing it on. */
export function driverAnswer(result: unknown): { rows: Array<Record<string, unknown>>; affected: number } {
  if (Array.isArray(result)) {
    const first = result[0] as unknown;
    if (Array.isArray(first)) return { rows: first, affected: 0 };
    return { rows: [], affected: Number((first as { affectedRows?: number })?.affectedRows ?? 0) };
  }
  const { rows, rowCount } = (result ?? {}) as {
    rows?: Array<Record<string, unknown>>;
    rowCount?: number | null;
  };
  return { rows: rows ?? [], affected: rowCount ?? 0 };
}
