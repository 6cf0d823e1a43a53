import type { Pool, PoolClient, QueryResult } from 'pg';
import {
  type Deadline,
  operationTimeout,
  StoreTimeoutError,
  storeTimeout,
  withinOperationTimeout,
} from './deadline.js';
import { newOwnerToken } from './owner-token.js';
import { Checkout, checkPool, failedOver } from './postgres-pool.js';
import {
  claimSql,
  completeSql,
  createInboxSql,
  type InboxTable,
  inboxTable,
  purgeSql,
  releaseSql,
  renewSql,
  storedKey,
} from './postgres-sql.js';
import type { ClaimResult, DedupeStore } from './types.js';

export interface PostgresDedupeStoreOptions<T extends boolean = false> {
  /**
   * A `pg` Pool; attach `pool.on('error', …)`. Waiting for a connection counts against operationTimeoutMs;
   * give the pool `connectionTimeoutMillis` too, so that a connection attempt the deadline gave up on does not
   * hold a slot of the pool until the network gives up.
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
  /**
   * Longest wait for one operation, connecting included (milliseconds, default 3000). Each statement runs
   * with `statement_timeout` and `lock_timeout` set to what is left of it, less a fifth (at most 500 ms) for
   * the answer to come back (in the same message: no extra round trip), so a locked table (a migration,
   * VACUUM FULL) fails it on the server before this side stops waiting: a claim never commits after its
   * request was answered. A server that stops answering fails it on this side. Either way the event is
   * answered 503 store_unavailable and retried.
   */
  operationTimeoutMs?: number;
}

/** What handlers get as ctx.tx: the transaction's client in transactional mode. */
export type PostgresTx<T extends boolean> = T extends true ? PoolClient : undefined;

const STORE = 'The PostgreSQL store';
/** statement_timeout (query_canceled) and lock_timeout (lock_not_available) firing on the server. */
const SERVER_TIMEOUTS = new Set(['57014', '55P03']);

/**
 * Dedupe store shared by several instances through a PostgreSQL inbox table. claim, complete and release
 * are one statement (one round trip) each; lease and retention are measured by the database's clock.
 */
export class PostgresDedupeStore<T extends boolean = false> implements DedupeStore<PostgresTx<T>> {
  readonly operationTimeoutMs: number;
  readonly #pool: Pool;
  readonly #table: InboxTable;
  readonly #sql: { claim: string; complete: string; release: string; renew: string; purge: string };
  /** What each statement leaves of its deadline for the server's answer to come back. */
  readonly #answerMarginMs: number;
  /** Present only in transactional mode: the receiver runs handlers through it when it exists. */
  readonly transact?: <R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: PostgresTx<T>) => Promise<R>,
  ) => Promise<R>;

  constructor(options: PostgresDedupeStoreOptions<T>) {
    this.#pool = checkPool(options?.pool);
    this.operationTimeoutMs = operationTimeout('PostgresDedupeStore', options.operationTimeoutMs);
    this.#answerMarginMs = Math.min(500, Math.ceil(this.operationTimeoutMs / 5));
    this.#table = inboxTable(options.table ?? 'webhook_inbox', options.schema);
    this.#sql = {
      claim: claimSql(this.#table),
      complete: completeSql(this.#table),
      release: releaseSql(this.#table),
      renew: renewSql(this.#table),
      purge: purgeSql(this.#table),
    };
    if (options.transactional === true) {
      // T is true here, so PostgresTx<T> is PoolClient (TypeScript does not narrow T from the check).
      this.transact = <R>(
        key: string,
        token: string,
        retentionMs: number,
        work: (tx: PostgresTx<T>) => Promise<R>,
      ) => this.#transact(storedKey(key), token, retentionMs, work as (tx: PoolClient) => Promise<R>);
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
    const { rows } = await this.#statement<{ status: ClaimResult['status']; retry_after_ms: number | null }>(
      this.#sql.claim,
      [storedKey(key), token, leaseMs],
    );
    const row = rows[0];
    if (row?.status === 'claimed') return { status: 'claimed', token };
    if (row?.status === 'duplicate') return { status: 'duplicate' };
    // No time left on the row we saw: another claim took it just now, so a whole lease is the estimate.
    const left = row?.retry_after_ms ?? 0;
    return { status: 'in_flight', retryAfterMs: left > 0 ? left : leaseMs };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return (await this.#statement(this.#sql.complete, [storedKey(key), token, retentionMs])).rowCount === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return (await this.#statement(this.#sql.release, [storedKey(key), token])).rowCount === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.#statement(this.#sql.renew, [storedKey(key), token, leaseMs])).rowCount === 1;
  }

  /** Deletes up to `limit` rows that expired over an hour ago; run it periodically. Returns how many. */
  async purgeExpired(limit = 10_000): Promise<number> {
    return (await this.#statement(this.#sql.purge, [limit])).rowCount ?? 0;
  }

  async #transact<R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: PoolClient) => Promise<R>,
  ): Promise<R> {
    // The handlers' own statements are theirs (handlerTimeoutMs bounds the answer); connecting, BEGIN and
    // the completion with its COMMIT each get the store's deadline.
    const checkout = await this.#bounded((deadline) => this.#connect(deadline));
    const { client } = checkout;
    let broken: Error | undefined;
    try {
      await this.#bounded((deadline) => this.#on(checkout, deadline, client.query('BEGIN')));
      const result = await work(client);
      const completed = await this.#bounded((deadline) =>
        this.#on(checkout, deadline, this.#completeAndCommit(client, deadline, key, token, retentionMs)),
      );
      if (!completed) {
        throw new Error(
          'The claim expired and was taken over while the handlers ran (longer than leaseMs): their writes ' +
            'were rolled back and the new owner processes the event. Raise leaseMs above the slowest handler.',
        );
      }
      return result;
    } catch (error) {
      if (error instanceof StoreTimeoutError) broken = error;
      else {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError as Error;
        }
      }
      throw failedOver(checkout, error);
    } finally {
      // A client whose rollback failed, or that passed its deadline, is in an unknown state: the pool
      // discards it, and the server rolls back what it left open.
      checkout.release(broken);
    }
  }

  /** Commits only when the completion matched: false leaves the transaction for the caller's ROLLBACK. */
  async #completeAndCommit(
    client: PoolClient,
    deadline: Deadline,
    key: string,
    token: string,
    retentionMs: number,
  ) {
    const limits = this.#serverLimits(deadline);
    const completed = await this.#run(client, limits, this.#sql.complete, [key, token, retentionMs]);
    if (completed.rowCount !== 1) return false;
    await client.query('COMMIT');
    return true;
  }

  /** One statement under the server-side deadlines, all within operationTimeoutMs. */
  #statement<Row extends object = object>(text: string, values: unknown[]): Promise<QueryResult<Row>> {
    return this.#bounded(async (deadline) => {
      const checkout = await this.#connect(deadline);
      try {
        const limits = this.#serverLimits(deadline);
        return await this.#on(checkout, deadline, this.#run<Row>(checkout.client, limits, text, values));
      } finally {
        checkout.release();
      }
    });
  }

  /**
   * The server's deadlines for the next statement: what is left of the operation's, less the time its answer
   * needs to come back. The server gives up first, so nothing this side stopped waiting for commits later (a
   * claim landing then would hold its event in flight for a whole lease, answered 409 to every retry).
   */
  #serverLimits(deadline: Deadline): string {
    const ms = Math.floor(deadline.remainingMs()) - this.#answerMarginMs;
    if (ms < 1) throw storeTimeout(STORE, this.operationTimeoutMs);
    return `SET LOCAL statement_timeout = ${ms}; SET LOCAL lock_timeout = ${ms};`;
  }

  /**
   * The statement after the two SET LOCALs (`limits`), as one simple-protocol message: one round trip, in an implicit
   * transaction (or the open one), so the settings hold for this statement only. A simple query takes no
   * parameters, so the values are written in as literals, strings escaped by the driver.
   */
  async #run<Row extends object>(
    client: PoolClient,
    limits: string,
    text: string,
    values: unknown[],
  ): Promise<QueryResult<Row>> {
    const inlined = text.replace(/\$(\d+)/g, (_match, n: string) => literal(client, values[Number(n) - 1]));
    try {
      // Several statements in one message answer one result each; the statement's is the last.
      const results = (await client.query<Row>(`${limits}\n${inlined}`)) as unknown as QueryResult<Row>[];
      return results[results.length - 1] as QueryResult<Row>;
    } catch (error) {
      throw this.#explain(error);
    }
  }

  #bounded<R>(operation: (deadline: Deadline) => Promise<R>): Promise<R> {
    return withinOperationTimeout(this.operationTimeoutMs, STORE, operation);
  }

  /** A pooled client within the deadline; one that connects after it is handed straight back. */
  async #connect(deadline: Deadline): Promise<Checkout> {
    const connecting = this.#pool.connect();
    try {
      return new Checkout(await deadline.within(connecting));
    } catch (error) {
      connecting.then(
        (late) => late.release(),
        () => {},
      );
      throw error;
    }
  }

  /** `work` on the checked-out client within the deadline; past it the client is destroyed at once. */
  async #on<R>(checkout: Checkout, deadline: Deadline, work: Promise<R>): Promise<R> {
    try {
      return await deadline.within(work);
    } catch (error) {
      if (error instanceof StoreTimeoutError) {
        work.catch(() => {});
        checkout.release(error);
      }
      throw error;
    }
  }

  /** The driver's error, or one that says what to do: a deadline passed on the server, the table is missing. */
  #explain(error: unknown): unknown {
    const code = (error as { code?: string })?.code;
    if (code !== undefined && SERVER_TIMEOUTS.has(code))
      return storeTimeout(STORE, this.operationTimeoutMs, error);
    if (code === '42P01') {
      return new Error(
        `The inbox table ${this.#table.ref} does not exist: run \`await store.migrate()\` once at startup, ` +
          'or apply sql/webhook_inbox.sql.',
        { cause: error },
      );
    }
    return error;
  }
}

function literal(client: PoolClient, value: unknown): string {
  if (typeof value === 'string') return client.escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new TypeError(`PostgresDedupeStore got ${String(value)} where a string or a finite number belongs.`);
}
