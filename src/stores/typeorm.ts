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
    const dialect = typeOrmDialect(dataSource);
    // Named statements until the server refuses one (a pooler that moves statements between connections).
    const named = { on: dialect === 'postgres' };
    super({
      store: STORE,
      dialect,
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: (text, values, tx, name) =>
        name !== undefined && tx?.queryRunner && named.on
          ? runNamed(dataSource, tx.queryRunner, { name, text, values }, named)
          : run(dataSource, text, values, tx),
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

/** What the store uses of the `pg` client under a PostgreSQL query runner. */
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{
    rows: SqlAnswer['rows'];
    rowCount: number | null;
  }>;
}

/** PostgreSQL's "prepared statement does not exist" and "already exists": a pooler between (PgBouncer's transaction mode). */
const STATEMENT_MOVED = new Set(['26000', '42P05']);

/**
 * One of the statements every event's transaction sends, as a named statement on the transaction's own `pg`
 * connection: PostgreSQL parses and plans it once per connection instead of on every event (TypeORM's
 * query() has no way to name one). TypeORM's logger still sees it, as it sees the runner's own queries. A
 * server that refuses the name (a pooler that hands the connection's statements to another) fails this event,
 * which is retried, and turns the names off for the store's later ones.
 */
async function runNamed(
  dataSource: DataSource,
  runner: QueryRunner,
  statement: { name: string; text: string; values: unknown[] },
  named: { on: boolean },
): Promise<SqlAnswer> {
  const connection = ((runner as { databaseConnection?: PgConnection }).databaseConnection ??
    (await runner.connect())) as PgConnection;
  dataSource.logger.logQuery(statement.text, statement.values, runner);
  try {
    const { rows, rowCount } = await connection.query(statement);
    return { rows, affected: rowCount ?? rows.length };
  } catch (error) {
    if (STATEMENT_MOVED.has(String((error as { code?: unknown })?.code))) named.on = false;
    dataSource.logger.logQueryError(error as Error, statement.text, statement.values, runner);
    throw error;
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
