import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { type Deadline, operationTimeout, StoreTimeoutError, withinOperationTimeout } from './deadline.js';
import { checkMysqlPool, checkOut, mysqlFailedOver, onConnection } from './mysql-pool.js';
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
import { newOwnerToken } from './owner-token.js';
import type { ClaimResult, DedupeStore } from './types.js';

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
const MIGRATION = 'sql/webhook_inbox.mysql.sql';

/**
 * Dedupe store shared by several instances through a MySQL or MariaDB inbox table (InnoDB). A new key is
 * claimed in one statement, complete, renew and release are one statement each; leases and retention are
 * measured by the database's clock.
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

  constructor(options: MysqlDedupeStoreOptions<T>) {
    this.#pool = checkMysqlPool('MysqlDedupeStore', options?.pool);
    this.operationTimeoutMs = operationTimeout('MysqlDedupeStore', options.operationTimeoutMs);
    this.#table = mysqlInboxTable('MysqlDedupeStore', options.table ?? 'webhook_inbox');
    this.#sql = mysqlStatements(this.#table);
    if (options.transactional === true) {
      // T is true here, so MysqlTx<T> is PoolConnection (TypeScript does not narrow T from the check).
      this.transact = (key, token, retentionMs, work) =>
        this.#transact(key, token, retentionMs, work as (tx: PoolConnection) => Promise<never>);
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

  async #transact<R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: PoolConnection) => Promise<R>,
  ): Promise<R> {
    // The handlers' own statements are theirs (handlerTimeoutMs bounds the answer); connecting, BEGIN and the
    // completion with its COMMIT each get the store's deadline.
    const connection = await this.#bounded((deadline) => checkOut(this.#pool, deadline.within));
    let destroyed = false;
    const step = <S>(run: () => Promise<S>) =>
      this.#bounded((deadline) => onConnection(connection, deadline.within, run())).catch((error) => {
        destroyed ||= error instanceof StoreTimeoutError;
        throw this.#explain(error);
      });
    try {
      await step(() => connection.query('START TRANSACTION'));
      const result = await work(connection);
      const completed = await step(() => this.#completeAndCommit(connection, key, token, retentionMs));
      if (!completed) {
        throw new Error(
          'The claim expired and was taken over while the handlers ran (longer than leaseMs): their writes ' +
            'were rolled back and the new owner processes the event. Raise leaseMs above the slowest handler.',
        );
      }
      return result;
    } catch (error) {
      if (!destroyed) {
        try {
          await connection.query('ROLLBACK');
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

  /** Commits only when the completion matched: false leaves the transaction for the caller's ROLLBACK. */
  async #completeAndCommit(connection: PoolConnection, key: string, token: string, retentionMs: number) {
    const values = [retentionMs, mysqlStoredKey(key), token];
    const [result] = await connection.query<ResultSetHeader>(this.#sql.complete, values);
    if (result.affectedRows !== 1) return false;
    await connection.query('COMMIT');
    return true;
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

  #bounded<R>(operation: (deadline: Deadline) => Promise<R>): Promise<R> {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, operation);
  }

  /** The driver's error, or one that says what to do when the table is missing. */
  #explain(error: unknown): unknown {
    if (!isMissingTable(error)) return error;
    return new Error(missingTableMessage(this.#table, MIGRATION), { cause: error });
  }
}
