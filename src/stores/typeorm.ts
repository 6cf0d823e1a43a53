import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlAnswer, type SqlDialect, SqlInbox } from './sql-inbox.js';
import type { ClaimResult, DedupeStore } from './types.js';

export interface TypeOrmDedupeStoreOptions {
  /** The app's TypeORM DataSource (`type: 'postgres'`, `'mysql'` or `'mariadb'`), initialized or not yet. */
  dataSource: DataSource;
  /** The inbox table. Default `webhook_inbox` (as `webhookInboxEntity()` of `messaging-webhooks/typeorm-entity`). */
  table?: string;
  /** Longest wait for one claim, renewal, completion or release (milliseconds, default 3000). */
  operationTimeoutMs?: number;
}

const STORE = 'TypeOrmDedupeStore';
const MIGRATION =
  "the migration TypeORM generates from webhookInboxEntity() of 'messaging-webhooks/typeorm-entity' (or sql/webhook_inbox*.sql)";

/**
 * Dedupe store on the app's TypeORM DataSource: the inbox table of the PostgreSQL or MySQL store, and the handlers
 * run in `dataSource.transaction()` together with the completion. Handlers get its `EntityManager` as ctx.tx:
 * `ctx.tx.getRepository(Order).update(…)` commits exactly once, together with the "processed" mark, or rolls
 * back with it.
 */
export class TypeOrmDedupeStore implements DedupeStore<EntityManager> {
  readonly #inbox: SqlInbox<EntityManager>;

  constructor(options: TypeOrmDedupeStoreOptions) {
    const dataSource = checkDataSource(options?.dataSource);
    this.#inbox = new SqlInbox<EntityManager>({
      store: STORE,
      dialect: typeOrmDialect(dataSource),
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: (text, values, tx) => run(dataSource, text, values, tx),
      transaction: (work) => dataSource.transaction(work),
      // TypeORM wraps the driver's error in a QueryFailedError that keeps its code (and errno) as its own.
      isMissingTable: (error) => {
        const { driverError } = (error ?? {}) as { driverError?: { code?: unknown; errno?: unknown } };
        return driverError?.code === '42P01' || driverError?.errno === 1146;
      },
    });
  }

  get operationTimeoutMs(): number {
    return this.#inbox.operationTimeoutMs;
  }

  /** The DDL migrate() runs, for this store's database and table (what webhookInboxEntity() describes). */
  get createTableSql(): string {
    return this.#inbox.createTableSql;
  }

  /** Creates the inbox table if missing (for apps that do not migrate webhookInboxEntity()). */
  migrate(): Promise<void> {
    return this.#inbox.migrate();
  }

  claim(key: string, leaseMs: number): Promise<ClaimResult> {
    return this.#inbox.claim(key, leaseMs);
  }

  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#inbox.complete(key, token, retentionMs);
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#inbox.renew(key, token, leaseMs);
  }

  release(key: string, token: string): Promise<boolean> {
    return this.#inbox.release(key, token);
  }

  /** Deletes up to `limit` rows that expired over an hour ago; run it periodically. Returns how many. */
  purgeExpired(limit?: number): Promise<number> {
    return this.#inbox.purgeExpired(limit);
  }

  transact<R>(
    key: string,
    token: string,
    retentionMs: number,
    work: (tx: EntityManager) => Promise<R>,
  ): Promise<R> {
    return this.#inbox.transact(key, token, retentionMs, work);
  }
}

/**
 * One statement through a query runner, asking TypeORM for its structured result (rows and affected count alike
 * on every driver): the transaction's runner inside an event, else one of the pool's for this statement.
 */
async function run(
  dataSource: DataSource,
  text: string,
  values: unknown[],
  tx: EntityManager | undefined,
): Promise<SqlAnswer> {
  const inTransaction = tx?.queryRunner;
  const runner: QueryRunner = inTransaction ?? dataSource.createQueryRunner();
  try {
    const result = await runner.query(text, values, true);
    const records = Array.isArray(result.records) ? (result.records as SqlAnswer['rows']) : [];
    return { rows: records, affected: Number(result.affected ?? records.length) };
  } finally {
    if (!inTransaction) await runner.release();
  }
}

function checkDataSource(dataSource: unknown): DataSource {
  const candidate = dataSource as Partial<DataSource> & { queryRunner?: unknown; connection?: unknown };
  if (
    candidate &&
    typeof candidate.transaction === 'function' &&
    typeof candidate.createQueryRunner !== 'function' &&
    candidate.connection
  ) {
    throw new WebhookConfigError(
      'new TypeOrmDedupeStore({ dataSource }) got an EntityManager: pass the DataSource; the store opens a transaction per event.',
    );
  }
  if (
    typeof candidate?.transaction !== 'function' ||
    typeof candidate.createQueryRunner !== 'function' ||
    !candidate.options
  ) {
    throw new WebhookConfigError(
      `new TypeOrmDedupeStore({ dataSource }) needs dataSource: the app's TypeORM DataSource (new DataSource({ type: 'postgres', … })), got ${kindOf(dataSource)}.`,
    );
  }
  return candidate as DataSource;
}

function typeOrmDialect(dataSource: DataSource): SqlDialect {
  const type = (dataSource.options as { type?: unknown }).type;
  if (type === 'postgres') return 'postgres';
  if (type === 'mysql' || type === 'mariadb') return 'mysql';
  throw new WebhookConfigError(
    `new TypeOrmDedupeStore({ dataSource }) supports TypeORM on PostgreSQL (type 'postgres') and MySQL/MariaDB (type 'mysql' or 'mariadb'), got type ${JSON.stringify(String(type))}.`,
  );
}
