import { WebhookConfigError } from '../base/errors.js';
import { type Deadline, operationTimeout, withinOperationTimeout } from './deadline.js';
import { mysqlFailedOver } from './mysql-pool.js';
import {
  createMysqlInboxSql,
  isMissingTable,
  type MysqlStatements,
  missingTableMessage,
  mysqlInboxTable,
  mysqlStatements,
  mysqlStoredKey,
  notClaimed,
} from './mysql-sql.js';
import { newOwnerToken } from './owner-token.js';
import {
  claimSql,
  completeSql,
  createInboxSql,
  inboxTable,
  purgeSql,
  releaseSql,
  renewSql,
  storedKey,
} from './postgres-sql.js';
import type { ClaimResult, DedupeStore } from './types.js';
import { isPostgresFailover, StoreUnavailableError } from './unavailable.js';

/** The databases the ORM stores speak: the inbox table and its statements are those of the raw-driver stores. */
export type SqlDialect = 'postgres' | 'mysql';

/** One statement's answer, whatever the ORM: its rows, and how many rows it changed. */
export interface SqlAnswer {
  rows: Array<Record<string, unknown>>;
  affected: number;
}

/**
 * How an ORM store reaches its database: `run` one statement (PostgreSQL's `$1` placeholders, MySQL's `?`),
 * on the transaction `tx` when given; `transaction` runs `work` in one of the ORM's own transactions, committed
 * when it resolves and rolled back when it throws.
 */
export interface SqlInboxDriver<Tx> {
  /** The store's name, as errors and log lines name it (`KnexDedupeStore`). */
  store: string;
  dialect: SqlDialect;
  /** The inbox table's name, checked as an identifier. */
  table: string;
  /** The ORM's own migration for the table, named in the error a missing table gives. */
  migration: string;
  /** The deadline of each store call; undefined takes the stores' default. */
  operationTimeoutMs: number | undefined;
  /** Runs one statement and answers its rows and how many rows it changed. */
  run(text: string, values: unknown[], tx?: Tx): Promise<SqlAnswer>;
  /** Runs `work` in one transaction of the ORM: committed when it resolves, rolled back when it throws. */
  transaction<R>(work: (tx: Tx) => Promise<R>): Promise<R>;
  /** True for the ORM's own error saying a table is missing, when it does not pass on the driver's. */
  isMissingTable?(error: unknown): boolean;
}

interface Statements {
  ddl: string;
  complete: string;
  renew: string;
  release: string;
  purge: string;
}

const TAKEN_OVER =
  'The claim expired and was taken over while the handlers ran (longer than leaseMs): their writes were rolled ' +
  'back and the new owner processes the event. Raise leaseMs above the slowest handler.';

/**
 * The inbox of a store that writes through an ORM: the claim, lease, complete and release contract of the
 * raw-driver stores on the same table, and `transact`, which runs the handlers in the ORM's transaction
 * together with the completion, so that the ORM's own transaction object is what they get as ctx.tx.
 */
export class SqlInbox<Tx> implements Required<Omit<DedupeStore<Tx>, 'close'>> {
  /** The deadline of each store call, in milliseconds. */
  readonly operationTimeoutMs: number;
  readonly #driver: SqlInboxDriver<Tx>;
  readonly #sql: Statements;
  readonly #mysql: MysqlStatements | undefined;
  readonly #pgClaim: string | undefined;
  readonly #table: { name: string };

  constructor(driver: SqlInboxDriver<Tx>) {
    this.#driver = driver;
    this.operationTimeoutMs = operationTimeout(driver.store, driver.operationTimeoutMs);
    if (driver.dialect === 'mysql') {
      const table = mysqlInboxTable(driver.store, driver.table);
      this.#table = table;
      this.#mysql = mysqlStatements(table);
      this.#sql = { ddl: createMysqlInboxSql(table), ...this.#mysql };
    } else {
      const table = checkedPgTable(driver.store, driver.table);
      this.#table = table;
      this.#pgClaim = lazilyFlushedClaim(claimSql(table));
      this.#sql = {
        ddl: createInboxSql(table),
        complete: completeSql(table),
        renew: renewSql(table),
        release: releaseSql(table),
        purge: purgeSql(table),
      };
    }
  }

  /** The DDL `migrate()` runs, for the dialect and table: the same table the raw-driver stores use. */
  get createTableSql(): string {
    return this.#sql.ddl;
  }

  /** The key and the values of a statement on it, in the order its dialect's placeholders take them. */
  #keyed(key: string, token: string, ms?: number): unknown[] {
    if (this.#driver.dialect === 'postgres')
      return ms === undefined ? [storedKey(key), token] : [storedKey(key), token, ms];
    const stored = mysqlStoredKey(key);
    return ms === undefined ? [stored, token] : [ms, stored, token];
  }

  /** Claims the event for `leaseMs`: claimed (with its token), in flight elsewhere, or already processed. */
  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    return this.#bounded(async (deadline) => {
      if (this.#pgClaim !== undefined) {
        const { rows } = await this.#run(deadline, this.#pgClaim, [storedKey(key), token, leaseMs]);
        const row = rows[0] as { status?: unknown; retry_after_ms?: unknown } | undefined;
        if (row?.status === 'claimed') return { status: 'claimed', token };
        if (row?.status === 'duplicate') return { status: 'duplicate' };
        return notClaimed({ left_ms: row?.retry_after_ms }, leaseMs);
      }
      const sql = this.#mysql as MysqlStatements;
      const stored = mysqlStoredKey(key);
      if ((await this.#run(deadline, sql.insert, [stored, token, leaseMs])).affected === 1) {
        return { status: 'claimed', token };
      }
      if ((await this.#run(deadline, sql.takeOver, [token, leaseMs, stored])).affected === 1) {
        return { status: 'claimed', token };
      }
      return notClaimed((await this.#run(deadline, sql.read, [stored])).rows[0], leaseMs);
    });
  }

  /** Marks the event processed for `retentionMs`; false when the claim was no longer this token's. */
  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#changedOne(this.#sql.complete, this.#keyed(key, token, retentionMs));
  }

  /** Extends the claim's lease; false when the claim was no longer this token's. */
  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#changedOne(this.#sql.renew, this.#keyed(key, token, leaseMs));
  }

  /** Gives the claim up, so a retry may take it at once; false when it was no longer this token's. */
  release(key: string, token: string): Promise<boolean> {
    return this.#changedOne(this.#sql.release, this.#keyed(key, token));
  }

  /** Creates the inbox table if missing; on PostgreSQL under a lock, as concurrent CREATEs race there. */
  async migrate(): Promise<void> {
    const statements = this.#sql.ddl.split(/;\s*\n/).filter((text) => text.trim() !== '');
    if (this.#driver.dialect === 'mysql') {
      for (const statement of statements) await this.#driver.run(statement, []);
      return;
    }
    await this.#driver.transaction(async (tx) => {
      await this.#driver.run(
        "SELECT 1 FROM pg_advisory_xact_lock(hashtext('messaging-webhooks:migrate'))",
        [],
        tx,
      );
      for (const statement of statements) await this.#driver.run(statement, [], tx);
    });
  }

  /** Deletes up to `limit` rows that expired over an hour ago; run it periodically. Returns how many. */
  purgeExpired(limit = 10_000): Promise<number> {
    return this.#bounded(async (deadline) => (await this.#run(deadline, this.#sql.purge, [limit])).affected);
  }

  async transact<R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: Tx) => Promise<R>,
  ): Promise<R> {
    const values = this.#keyed(key, token, retentionMs);
    try {
      return await this.#driver.transaction(async (tx) => {
        const result = await work(tx);
        // The completion in the same transaction: the ORM commits it with the handlers' writes, or neither.
        const completed = await this.#bounded(async () => {
          try {
            return (await this.#driver.run(this.#sql.complete, values, tx)).affected === 1;
          } catch (error) {
            throw this.#explain(error);
          }
        });
        if (!completed) throw new Error(TAKEN_OVER);
        return result;
      });
    } catch (error) {
      throw this.#failedOver(error);
    }
  }

  async #changedOne(text: string, values: unknown[]): Promise<boolean> {
    return this.#bounded(async (deadline) => (await this.#run(deadline, text, values)).affected === 1);
  }

  async #run(deadline: Deadline, text: string, values: unknown[]): Promise<SqlAnswer> {
    try {
      return await deadline.within(this.#driver.run(text, values));
    } catch (error) {
      throw this.#failedOver(this.#explain(error));
    }
  }

  #bounded<R>(operation: (deadline: Deadline) => Promise<R>): Promise<R> {
    return withinOperationTimeout(this.operationTimeoutMs, `The ${this.#driver.store}`, operation);
  }

  #failedOver(error: unknown): unknown {
    if (this.#driver.dialect === 'mysql') return mysqlFailedOver(error);
    if (error instanceof StoreUnavailableError || !isPostgresFailover(error)) return error;
    return new StoreUnavailableError(
      'The PostgreSQL connection was lost or the server cannot take writes (a failover, a restart, a standby): ' +
        'nothing of the event committed; it is answered 503 and retried.',
      { cause: error },
    );
  }

  /** The ORM's error, or one naming the migration when the table is missing (an ORM may wrap the driver's). */
  #explain(error: unknown): unknown {
    let missing = false;
    for (let cause = error, depth = 0; cause && depth < 5 && !missing; depth++) {
      missing =
        this.#driver.isMissingTable?.(cause) === true ||
        (this.#driver.dialect === 'mysql'
          ? isMissingTable(cause)
          : (cause as { code?: unknown }).code === '42P01');
      cause = (cause as { cause?: unknown }).cause;
    }
    if (!missing) return error;
    return new Error(missingTableMessage(this.#table, this.#driver.migration), { cause: error });
  }
}

/**
 * The claim with its commit not waiting for the WAL flush (synchronous_commit off for its transaction only): the
 * event's transaction commits durably after it, flushing the WAL this claim is in. A claim lost to a crash of the
 * server before that loses nothing: the completion in the event's transaction then matches no row, rolls back
 * with the handlers' writes, and the retry claims the event again. One flush per delivery, as by hand.
 */
function lazilyFlushedClaim(claim: string): string {
  const lazy = claim
    .replace(/^WITH /, "WITH lazy AS (SELECT set_config('synchronous_commit', 'off', true)),\n")
    .replace('FROM (SELECT 1) AS one LEFT JOIN', 'FROM lazy AS one LEFT JOIN');
  if (lazy === claim || !lazy.includes('FROM lazy AS one'))
    throw new Error('The PostgreSQL claim changed shape.');
  return lazy;
}

function checkedPgTable(store: string, table: string) {
  try {
    return inboxTable(table);
  } catch {
    throw new WebhookConfigError(
      `new ${store}({ table }): table must be letters, digits and underscores (not starting with a digit, at most 48), got ${JSON.stringify(table)}.`,
    );
  }
}

/** A driver's answer as pg (`{ rows, rowCount }`) or mysql2 (`[rows or header, fields]`) gives it, the ORM passing it on. */
export function driverAnswer(result: unknown): SqlAnswer {
  if (Array.isArray(result)) {
    const first = result[0] as unknown;
    if (Array.isArray(first)) return { rows: first, affected: 0 };
    return { rows: [], affected: Number((first as { affectedRows?: number })?.affectedRows ?? 0) };
  }
  const { rows, rowCount } = (result ?? {}) as { rows?: SqlAnswer['rows']; rowCount?: number | null };
  return { rows: rows ?? [], affected: rowCount ?? 0 };
}
