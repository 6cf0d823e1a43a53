import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlAnswer, type SqlDialect, SqlInbox } from './sql-inbox.js';

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
export class TypeOrmDedupeStore extends SqlInbox<EntityManager> {
  constructor(options: TypeOrmDedupeStoreOptions) {
    const dataSource = checkDataSource(options?.dataSource);
    super({
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
