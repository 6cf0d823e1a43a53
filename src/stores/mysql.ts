import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import {
  type Deadline,
  operationDeadline,
  operationTimeout,
  StoreTimeoutError,
  withinOperationTimeout,
} from './deadline.js';
import { checkMysqlPool, checkOut, mysqlFailedOver, onConnection, storeStatement } from './mysql-pool.js';
import {
  createMysqlInboxSql,
  isMissingTable,
  type MysqlInboxTable,
  type MysqlStatements,
  missingTableMessage,
  mysqlInboxTable,
  mysqlStatements,
  mysqlStoredKey,
  notClaimed,
} from './mysql-sql.js';
import { openClaim, TAKEN_OVER } from './open-claim.js';
import { newOwnerToken } from './owner-token.js';
import {
  claimOnTransaction,
  driverAnswer,
  mysqlClaimInTransaction,
  openMysqlClaim,
} from './sql-inbox-sql.js';
import type { ClaimResult, DedupeStore, OpenClaimResult } from './types.js';

export interface MysqlDedupeStoreOptions<T extends boolean = false> {
  /** A `mysql2/promise` Pool (`mysql.createPool({ uri })`). Give it `connectTimeout` too. */
  pool: Pool;
  /** The inbox table. Default `webhook_inbox`. */
  table?: string;
  /**
   * Run the handlers in a transaction that also records the completion: handlers get its connection as
   * ctx.tx, and their writes commit exactly once, together with the "processed" mark.
   */
  transactional?: T;
  /**
   * Longest wait for one operation, connecting included (milliseconds, default 3000). Past it the event is
   * answered 503 store_unavailable and retried, and the connection is destroyed, never handed out again.
   */
  operationTimeoutMs?: number;
}

/** What handlers get as ctx.tx: the transaction's connection in transactional mode. */
export type MysqlTx<T extends boolean> = T extends true ? PoolConnection : undefined;

const STORE = 'The MySQL store';

/** One store statement on the transaction's connection, within operationTimeoutMs. */
type Step = <S>(run: () => Promise<S>) => Promise<S>;
const MIGRATION = 'sql/webhook_inbox.mysql.sql';

/**
 * Dedupe store shared by several instances through a MySQL or MariaDB inbox table (InnoDB). A new key is
 * claimed in one statement, complete, renew and release are one statement each; leases and retention are
 * measured by the database's clock. Transactional on MariaDB, the claim is the first statement of the event's
 * transaction (claimInTransaction); on MySQL, which lacks `SET STATEMENT`, it commits on its own before it.
 */
export class MysqlDedupeStore<T extends boolean = false> implements DedupeStore<MysqlTx<T>> {
  readonly operationTimeoutMs: number;
  readonly #pool: Pool;
  readonly #table: MysqlInboxTable;
  readonly #sql: MysqlStatements;
  /** Present only in transactional mode: the receiver runs handlers through it when it exists. */
  readonly transact?: <R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: MysqlTx<T>) => Promise<R>,
  ) => Promise<R>;
  /** Transactional mode on MariaDB: the claim inside the event's transaction (dropped on MySQL at first use). */
  claimInTransaction?: (key: string, leaseMs: number) => Promise<OpenClaimResult<MysqlTx<T>>>;

  constructor(options: MysqlDedupeStoreOptions<T>) {
    this.#pool = checkMysqlPool('MysqlDedupeStore', options?.pool);
    this.operationTimeoutMs = operationTimeout('MysqlDedupeStore', options.operationTimeoutMs);
    this.#table = mysqlInboxTable('MysqlDedupeStore', options.table ?? 'webhook_inbox');
    this.#sql = mysqlStatements(this.#table);
    if (options.transactional === true) {
      // T is true here, so MysqlTx<T> is PoolConnection (TypeScript does not narrow T from the check).
      this.transact = (key, token, retentionMs, work) =>
        this.#transact(key, token, retentionMs, work as (tx: PoolConnection) => Promise<never>);
      const inTransaction = mysqlClaimInTransaction(this.#sql);
      this.claimInTransaction = (key, leaseMs) =>
        openMysqlClaim(
          this as MysqlDedupeStore<true>,
          () => this.#claimInTransaction(inTransaction, key, leaseMs),
          key,
          leaseMs,
        ) as Promise<OpenClaimResult<MysqlTx<T>>>;
    }
  }

  /** The DDL migrate() runs (also shipped as sql/webhook_inbox.mysql.sql for the default name). */
  get createTableSql(): string {
    return createMysqlInboxSql(this.#table);
  }

  /** Creates the inbox table if missing. Safe to run from every instance at startup, even at once. */
  async migrate(): Promise<void> {
    await this.#pool.query(this.createTableSql);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const stored = mysqlStoredKey(key);
    const token = newOwnerToken();
    return this.#bounded(async (deadline) => {
      const inserted = await this.#write(deadline, this.#sql.insert, [stored, token, leaseMs]);
      if (inserted === 1) return { status: 'claimed', token };
      const taken = await this.#write(deadline, this.#sql.takeOver, [token, leaseMs, stored]);
      if (taken === 1) return { status: 'claimed', token };
      const [rows] = await this.#query<RowDataPacket[]>(deadline, this.#sql.read, [stored]);
      return notClaimed(rows[0] as { state?: unknown; left_ms?: unknown } | undefined, leaseMs);
    });
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    const values = [retentionMs, mysqlStoredKey(key), token];
    return this.#bounded(async (deadline) => (await this.#write(deadline, this.#sql.complete, values)) === 1);
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const values = [leaseMs, mysqlStoredKey(key), token];
    return this.#bounded(async (deadline) => (await this.#write(deadline, this.#sql.renew, values)) === 1);
  }

  release(key: string, token: string): Promise<boolean> {
    const values = [mysqlStoredKey(key), token];
    return this.#bounded(async (deadline) => (await this.#write(deadline, this.#sql.release, values)) === 1);
  }

  /** Deletes up to `limit` rows that expired over an hour ago; run it periodically. Returns how many. */
  purgeExpired(limit = 10_000): Promise<number> {
    return this.#bounded((deadline) => this.#write(deadline, this.#sql.purge, [limit]));
  }

  #transact<R>(key: string, token: string, retentionMs: number, work: (tx: PoolConnection) => Promise<R>) {
    return this.#transaction(async (connection, step) => {
      const result = await work(connection);
      if (!(await step(() => this.#complete(connection, key, token, retentionMs))))
        throw new Error(TAKEN_OVER);
      return result;
    });
  }

  #claimInTransaction(
    statements: ReturnType<typeof mysqlClaimInTransaction>,
    key: string,
    leaseMs: number,
  ): Promise<OpenClaimResult<PoolConnection>> {
    const token = newOwnerToken();
    // The transaction's own step, for the claim's statements and the completion inside it.
    let step: Step | undefined;
    const onStep: Step = (run) => (step as Step)(run);
    // The opening's deadline: a claim answering after it is rolled back. Each step bounds itself (step).
    const deadline = this.#deadline();
    return openClaim<PoolConnection>({
      token,
      transaction: (work) =>
        this.#transaction((connection, itsStep) => {
          step = itsStep;
          return work(connection);
        }),
      claim: (connection) =>
        claimOnTransaction(
          'mysql',
          { mysql: statements },
          async (text, values) =>
            driverAnswer([await onStep(() => storeStatement(connection, text, values))]),
          key,
          token,
          leaseMs,
        ),
      complete: (connection, retentionMs) =>
        onStep(() => this.#complete(connection, key, token, retentionMs)),
      within: (opening) => deadline.within(opening),
      explain: (error) => error,
      takenOver: TAKEN_OVER,
    });
  }

  /**
   * `work` in a transaction on a connection of its own: committed when it resolves, rolled back when it throws.
   * The handlers' own statements are theirs (handlerTimeoutMs bounds the answer); connecting, START TRANSACTION,
   * each `step` of the store and COMMIT get the store's deadline, past which the connection is destroyed.
   */
  async #transaction<R>(work: (connection: PoolConnection, step: Step) => Promise<R>): Promise<R> {
    const connection = await checkOut(this.#pool, this.#deadline().within);
    let destroyed = false;
    const step: Step = (run) =>
      onConnection(connection, this.#deadline().within, run()).catch((error) => {
        destroyed ||= error instanceof StoreTimeoutError;
        throw this.#explain(error);
      });
    try {
      await step(() => storeStatement(connection, 'START TRANSACTION'));
      const result = await work(connection, step);
      await step(() => storeStatement(connection, 'COMMIT'));
      return result;
    } catch (error) {
      if (!destroyed) {
        try {
          await storeStatement(connection, 'ROLLBACK');
        } catch {
          // The connection is in an unknown state: the server rolls back what it left open.
          connection.destroy();
          destroyed = true;
        }
      }
      throw mysqlFailedOver(error);
    } finally {
      if (!destroyed) connection.release();
    }
  }

  /** The completion on the transaction's connection: false when the claim is no longer this token's. */
  async #complete(connection: PoolConnection, key: string, token: string, retentionMs: number) {
    const values = [retentionMs, mysqlStoredKey(key), token];
    const result = await storeStatement<ResultSetHeader>(connection, this.#sql.complete, values);
    return result.affectedRows === 1;
  }

  async #write(deadline: Deadline, text: string, values: unknown[]): Promise<number> {
    const [result] = await this.#query<ResultSetHeader>(deadline, text, values);
    return result.affectedRows;
  }

  /** One statement on a connection of its own, within the operation's deadline. */
  async #query<Result extends RowDataPacket[] | ResultSetHeader>(
    deadline: Deadline,
    text: string,
    values: unknown[],
  ): Promise<[Result, unknown]> {
    const connection = await checkOut(this.#pool, deadline.within);
    let destroyed = false;
    try {
      return await onConnection(connection, deadline.within, connection.query<Result>(text, values));
    } catch (error) {
      destroyed = error instanceof StoreTimeoutError;
      throw mysqlFailedOver(this.#explain(error));
    } finally {
      if (!destroyed) connection.release();
    }
  }

  #deadline(): Deadline {
    return operationDeadline(this.operationTimeoutMs, STORE);
  }

  #bounded<R>(operation: (deadline: Deadline) => Promise<R>): Promise<R> {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, operation);
  }

  /** The driver's error, or one that says what to do when the table is missing. */
  #explain(error: unknown): unknown {
    if (!isMissingTable(error)) return error;
    return new Error(missingTableMessage(this.#table, MIGRATION), { cause: error });
  }
}
