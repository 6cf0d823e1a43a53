import type { Pool } from 'pg';
import { option, rules } from '../base/options.js';
import { operationTimeout, withinOperationTimeout } from '../stores/deadline.js';
import { checkPool } from '../stores/postgres-pool.js';
import { DEFAULT_STATUS_RETENTION_MS } from './memory-store.js';
import {
  countOpenSql,
  createStatusSql,
  openSql,
  purgeSql,
  readSql,
  type StatusTable,
  statusTable,
  writeSql,
} from './postgres-sql.js';
import { isFinal, type TrackedMessage } from './record.js';
import type { StatusStore } from './store.js';

export interface PostgresStatusStoreOptions {
  /** A `pg` Pool; attach `pool.on('error', …)`. */
  pool: Pool;
  /** The status table. Default `message_status`. */
  table?: string;
  /** Its schema. Default: the connection's search_path. */
  schema?: string;
  /** How long a final message is kept (milliseconds, the database's clock). Default 30 days. */
  retentionMs?: number;
  /** Longest wait for one operation, connecting included (milliseconds). Default 3000. */
  operationTimeoutMs?: number;
}

const STORE = 'The PostgreSQL status store';

/**
 * Statuses shared by every process through one PostgreSQL table. Each write is one statement, a compare and
 * set on the version under the row lock: of two processes making the same transition, one wins.
 */
export class PostgresStatusStore implements StatusStore {
  readonly retentionMs: number;
  readonly operationTimeoutMs: number;
  readonly #pool: Pool;
  readonly #table: StatusTable;
  readonly #sql: Record<'write' | 'read' | 'open' | 'countOpen' | 'purge', string>;

  constructor(options: PostgresStatusStoreOptions) {
    this.#pool = checkPool(options?.pool);
    this.#table = statusTable(options.table ?? 'message_status', options.schema);
    this.retentionMs = option(
      'retentionMs',
      options.retentionMs,
      DEFAULT_STATUS_RETENTION_MS,
      rules.whole({ min: 1 }),
      'new PostgresStatusStore({ retentionMs }): ',
    );
    this.operationTimeoutMs = operationTimeout('PostgresStatusStore', options.operationTimeoutMs);
    const t = this.#table;
    this.#sql = {
      write: writeSql(t),
      read: readSql(t),
      open: openSql(t),
      countOpen: countOpenSql(t),
      purge: purgeSql(t),
    };
  }

  /** The DDL migrate() runs (also shipped as sql/message_status.sql for the default name). */
  get createTableSql(): string {
    return createStatusSql(this.#table);
  }

  /** Creates the table if missing; safe from every instance at startup. */
  async migrate(): Promise<void> {
    await this.#pool.query(`SELECT pg_advisory_xact_lock(hashtext('messaging-webhooks:migrate-status'));
${this.createTableSql}`);
  }

  async read(messageId: string): Promise<TrackedMessage | undefined> {
    const { rows } = await this.#query<{ record: TrackedMessage }>(this.#sql.read, [
      messageId,
      this.retentionMs,
    ]);
    return rows[0]?.record;
  }

  async write(record: TrackedMessage, expectedVersion: number): Promise<boolean> {
    const final = isFinal(record.status);
    const params = [
      record.messageId,
      record.version,
      record.status,
      final,
      record.expectedAt,
      expectedVersion,
      this.retentionMs,
      JSON.stringify(record),
    ];
    return (await this.#query(this.#sql.write, params)).rowCount === 1;
  }

  async open(expectedBefore: number, limit: number): Promise<TrackedMessage[]> {
    const { rows } = await this.#query<{ record: TrackedMessage }>(this.#sql.open, [expectedBefore, limit]);
    return rows.map((row) => row.record);
  }

  async countOpen(): Promise<number> {
    const { rows } = await this.#query<{ open: number }>(this.#sql.countOpen, []);
    return rows[0]?.open ?? 0;
  }

  /** Deletes up to `limit` final messages past retention; run it now and then. Returns how many. */
  async purgeExpired(limit = 10_000): Promise<number> {
    return (await this.#query(this.#sql.purge, [this.retentionMs, limit])).rowCount ?? 0;
  }

  async close(): Promise<void> {}

  /** pool.query gives its connection back however the statement ends; the deadline bounds the wait for both. */
  #query<R extends object>(sql: string, params: unknown[]) {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, (deadline) =>
      deadline.within(this.#pool.query<R>(sql, params)),
    );
  }
}
