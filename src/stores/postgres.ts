import type { Pool, PoolClient, QueryResult } from 'pg';
import { newOwnerToken } from './owner-token.js';
import {
  claimSql,
  completeSql,
  createInboxSql,
  type InboxTable,
  inboxTable,
  purgeSql,
  releaseSql,
} from './postgres-sql.js';
import type { ClaimResult, DedupeStore } from './types.js';

export interface PostgresDedupeStoreOptions<T extends boolean = false> {
  /**
   * A `pg` Pool. Give it `connectionTimeoutMillis` (and attach `pool.on('error', …)`): without a connection
   * timeout a claim waits as long as the network does before the receiver can answer 503.
   */
  pool: Pool;
  /** The inbox table. Default `webhook_inbox`. */
  table?: string;
  /** Its schema. Default: the connection's search_path. */
  schema?: string;
  /**
   * Run the handlers in a transaction that also records the completion: handlers get its client as
   * ctx.tx, and their writes commit exactly once, together with the "processed" mark.
   */
  transactional?: T;
}

/** What handlers get as ctx.tx: the transaction's client in transactional mode. */
export type PostgresTx<T extends boolean> = T extends true ? PoolClient : undefined;

type Queryable = Pick<Pool, 'query'> | PoolClient;

/**
 * Dedupe store shared by several instances through a PostgreSQL inbox table. claim, complete and release
 * are one statement (one round trip) each; lease and retention are measured by the database's clock.
 */
export class PostgresDedupeStore<T extends boolean = false> implements DedupeStore<PostgresTx<T>> {
  readonly #pool: Pool;
  readonly #table: InboxTable;
  readonly #sql: { claim: string; complete: string; release: string; purge: string };
  /** Present only in transactional mode: the receiver runs handlers through it when it exists. */
  readonly transact?: <R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: PostgresTx<T>) => Promise<R>,
  ) => Promise<R>;

  constructor(options: PostgresDedupeStoreOptions<T>) {
    if (typeof options?.pool?.query !== 'function' || typeof options.pool.connect !== 'function') {
      throw new TypeError('PostgresDedupeStore needs { pool }: a Pool from the `pg` package.');
    }
    this.#pool = options.pool;
    this.#table = inboxTable(options.table ?? 'webhook_inbox', options.schema);
    this.#sql = {
      claim: claimSql(this.#table),
      complete: completeSql(this.#table),
      release: releaseSql(this.#table),
      purge: purgeSql(this.#table),
    };
    if (options.transactional === true) {
      // T is true here, so PostgresTx<T> is PoolClient (TypeScript does not narrow T from the check).
      this.transact = <R>(
        key: string,
        token: string,
        retentionMs: number,
        work: (tx: PostgresTx<T>) => Promise<R>,
      ) => this.#transact(key, token, retentionMs, work as (tx: PoolClient) => Promise<R>);
    }
  }

  /** The DDL migrate() runs (also shipped as sql/webhook_inbox.sql for the default name). */
  get createTableSql(): string {
    return createInboxSql(this.#table);
  }

  /** Creates the inbox table if missing. Safe to run from every instance at startup, even at once. */
  async migrate(): Promise<void> {
    // One implicit transaction (simple protocol, no parameters); the lock serialises concurrent migrations,
    // which would otherwise race on CREATE TABLE IF NOT EXISTS.
    await this.#pool.query(`SELECT pg_advisory_xact_lock(hashtext('messaging-webhooks:migrate'));
${this.createTableSql}`);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = newOwnerToken();
    const { rows } = await this.#query<{ status: ClaimResult['status']; retry_after_ms: number | null }>(
      this.#pool,
      this.#sql.claim,
      [key, token, leaseMs],
    );
    const row = rows[0];
    if (row?.status === 'claimed') return { status: 'claimed', token };
    if (row?.status === 'duplicate') return { status: 'duplicate' };
    // No time left on the row we saw: another claim took it just now, so a whole lease is the estimate.
    const left = row?.retry_after_ms ?? 0;
    return { status: 'in_flight', retryAfterMs: left > 0 ? left : leaseMs };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return (await this.#query(this.#pool, this.#sql.complete, [key, token, retentionMs])).rowCount === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return (await this.#query(this.#pool, this.#sql.release, [key, token])).rowCount === 1;
  }

  /** Deletes up to `limit` rows that expired over an hour ago; run it periodically. Returns how many. */
  async purgeExpired(limit = 10_000): Promise<number> {
    return (await this.#query(this.#pool, this.#sql.purge, [limit])).rowCount ?? 0;
  }

  async #transact<R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: PoolClient) => Promise<R>,
  ): Promise<R> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      const completed = await this.#query(client, this.#sql.complete, [key, token, retentionMs]);
      if (completed.rowCount !== 1) {
        throw new Error(
          'The claim expired and was taken over while the handlers ran (longer than leaseMs): their writes ' +
            'were rolled back and the new owner processes the event. Raise leaseMs above the slowest handler.',
        );
      }
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      throw error;
    } finally {
      // A client whose rollback failed is in an unknown state: the pool discards it.
      client.release(broken);
    }
  }

  async #query<Row extends object = object>(
    db: Queryable,
    text: string,
    values: unknown[],
  ): Promise<QueryResult<Row>> {
    try {
      return await db.query<Row>(text, values);
    } catch (error) {
      if ((error as { code?: string })?.code === '42P01') {
        throw new Error(
          `The inbox table ${this.#table.ref} does not exist: run \`await store.migrate()\` once at startup, ` +
            'or apply sql/webhook_inbox.sql.',
          { cause: error },
        );
      }
      throw error;
    }
  }
}
