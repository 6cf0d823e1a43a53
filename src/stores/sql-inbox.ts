import { type Deadline, operationDeadline, operationTimeout, withinOperationTimeout } from './deadline.js';
import { mysqlFailedOver } from './mysql-pool.js';
import {
  createMysqlInboxSql,
  isMissingTable,
  type MysqlStatements,
  missingTableMessage,
  mysqlInboxTable,
  mysqlStatements,
  mysqlStoredKey,
} from './mysql-sql.js';
import { openClaim, TAKEN_OVER } from './open-claim.js';
import { newOwnerToken } from './owner-token.js';
import { completeSql, createInboxSql, purgeSql, releaseSql, renewSql, storedKey } from './postgres-sql.js';
import {
  checkedPgTable,
  claimOnTransaction,
  lazilyFlushedClaim,
  leaseInterval,
  mysqlClaimInTransaction,
  openMysqlClaim,
  pgClaimInTransaction,
  pgClaimSql,
  statementName,
} from './sql-inbox-sql.js';
import type { ClaimResult, DedupeStore, OpenClaimResult } from './types.js';
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
  /**
   * Runs one statement and answers its rows and how many rows it changed. `name` comes with the statements
   * every event sends in its transaction (the claim, the completion): a driver that can keeps the statement
   * prepared on the connection under it; one that cannot ignores it.
   */
  run(text: string, values: unknown[], tx?: Tx, name?: string): Promise<SqlAnswer>;
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

/**
 * The inbox of a store that writes through an ORM: the claim, lease, complete and release contract of the
 * raw-driver stores on the same table, and `transact`, which runs the handlers in the ORM's transaction
 * together with the completion, so that the ORM's own transaction object is what they get as ctx.tx.
 */
export class SqlInbox<Tx> implements Required<Omit<DedupeStore<Tx>, 'close' | 'claimInTransaction'>> {
  /** The deadline of each store call, in milliseconds. */
  readonly operationTimeoutMs: number;
  readonly #driver: SqlInboxDriver<Tx>;
  readonly #sql: Statements;
  readonly #mysql: MysqlStatements | undefined;
  readonly #pgClaim: string | undefined;
  readonly #table: { name: string };
  readonly #inTransaction: Parameters<typeof claimOnTransaction>[1];
  /** The names the statements of every event's transaction go under (PostgreSQL), by their text. */
  readonly #names = new Map<string, string>();
  /** The claim in the event's own transaction (one per delivery); gone on MySQL, which lacks `SET STATEMENT`. */
  claimInTransaction?: (key: string, leaseMs: number) => Promise<OpenClaimResult<Tx>>;

  constructor(driver: SqlInboxDriver<Tx>) {
    this.#driver = driver;
    this.operationTimeoutMs = operationTimeout(driver.store, driver.operationTimeoutMs);
    if (driver.dialect === 'mysql') {
      const table = mysqlInboxTable(driver.store, driver.table);
      this.#table = table;
      this.#mysql = mysqlStatements(table);
      this.#sql = { ddl: createMysqlInboxSql(table), ...this.#mysql };
      this.#inTransaction = { mysql: mysqlClaimInTransaction(this.#mysql) };
    } else {
      const table = checkedPgTable(driver.store, driver.table);
      this.#table = table;
      this.#pgClaim = lazilyFlushedClaim(pgClaimSql(table));
      this.#sql = {
        ddl: createInboxSql(table),
        complete: completeSql(table),
        renew: renewSql(table),
        release: releaseSql(table),
        purge: purgeSql(table),
      };
      const inTransaction = pgClaimInTransaction(table);
      this.#inTransaction = { pgInTransaction: inTransaction };
      for (const text of [inTransaction.insert, inTransaction.takeOver, inTransaction.complete])
        this.#names.set(text, statementName(text));
    }
    this.claimInTransaction = (key, leaseMs) => this.#claimInTransaction(key, leaseMs);
  }

  /** The DDL `migrate()` runs, for the dialect and table: the same table the raw-driver stores use. */
  get createTableSql(): string {
    return this.#sql.ddl;
  }

  /** The key and the values of a statement on it, in the order its dialect's placeholders take them. */
  #keyed(key: string, token: string, ms?: number | string): unknown[] {
    if (this.#driver.dialect === 'postgres')
      return ms === undefined ? [storedKey(key), token] : [storedKey(key), token, ms];
    const stored = mysqlStoredKey(key);
    return ms === undefined ? [stored, token] : [ms, stored, token];
  }

  /**
   * Claims the event for `leaseMs`: claimed (with its token), in flight elsewhere, or already processed. A key
   * held by an open transaction (claimInTransaction) is in flight at once on PostgreSQL (its advisory lock), and
   * on MySQL once the row lock's wait ends.
   */
  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    const text = { pg: this.#pgClaim, mysql: this.#mysql };
    return this.#bounded(async (deadline) => {
      const run = (sql: string, values: unknown[]) => this.#run(deadline, sql, values);
      const result = await claimOnTransaction(this.#driver.dialect, text, run, key, token, leaseMs);
      return result.status === 'claimed' ? { status: 'claimed', token } : result;
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
    const [text, values] = this.#completion(key, token, retentionMs);
    try {
      return await this.#driver.transaction(async (tx) => {
        const result = await work(tx);
        // The completion in the same transaction: the ORM commits it with the handlers' writes, or neither.
        const completed = await this.#bounded(async () => {
          try {
            return (await this.#runOn(tx, text, values)).affected === 1;
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

  #claimInTransaction(key: string, leaseMs: number): Promise<OpenClaimResult<Tx>> {
    const token = newOwnerToken();
    const driver = this.#driver;
    // One deadline for the claim: openClaim bounds its own wait for the claim's answer with it.
    const opening = () => {
      const deadline = operationDeadline(this.operationTimeoutMs, `The ${driver.store}`);
      return openClaim<Tx>({
        token,
        transaction: (work) => driver.transaction(work),
        claim: (tx) =>
          claimOnTransaction(
            driver.dialect,
            this.#inTransaction,
            (text, values) => this.#runOn(tx, text, values),
            key,
            token,
            leaseMs,
          ),
        complete: async (tx, retentionMs) =>
          (await this.#runOn(tx, ...this.#completion(key, token, retentionMs))).affected === 1,
        within: (opened) => deadline.within(opened),
        explain: (error) => this.#failedOver(this.#explain(error)),
        takenOver: TAKEN_OVER,
      });
    };
    return driver.dialect === 'mysql' ? openMysqlClaim(this, opening, key, leaseMs) : opening();
  }

  /** The completion in the event's transaction, and its values. */
  #completion(key: string, token: string, retentionMs: number): [string, unknown[]] {
    const pg = this.#inTransaction.pgInTransaction;
    if (!pg) return [this.#sql.complete, this.#keyed(key, token, retentionMs)];
    return [pg.complete, this.#keyed(key, token, leaseInterval(retentionMs))];
  }

  /** A statement of the event's transaction, under its name when it has one. */
  #runOn(tx: Tx, text: string, values: unknown[]): Promise<SqlAnswer> {
    return this.#driver.run(text, values, tx, this.#names.get(text));
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
