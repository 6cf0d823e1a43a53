import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlAnswer, type SqlDialect, SqlInbox } from './sql-inbox.js';

export interface KyselyDedupeStoreOptions<DB> {
  /** The app's Kysely instance, with the PostgreSQL or the MySQL dialect. */
  db: Kysely<DB>;
  /** The inbox table. Default `webhook_inbox`. */
  table?: string;
  /**
   * The database, when the dialect's adapter is not Kysely's own PostgresAdapter or MysqlAdapter (a third-party
   * dialect speaking one of the two).
   */
  dialect?: 'postgres' | 'mysql';
  /** Longest wait for one claim, renewal, completion or release (milliseconds, default 3000). */
  operationTimeoutMs?: number;
}

const STORE = 'KyselyDedupeStore';
const MIGRATION = "the migration of kyselyInboxMigration() from 'messaging-webhooks/kysely'";

/**
 * Dedupe store on the app's Kysely: the inbox table of the PostgreSQL or MySQL store, and the handlers run in a
 * Kysely transaction that also records the completion. Handlers get that `Transaction<DB>` as ctx.tx: their
 * writes through it commit exactly once, together with the "processed" mark, or roll back with it.
 */
export class KyselyDedupeStore<DB> extends SqlInbox<Transaction<DB>> {
  constructor(options: KyselyDedupeStoreOptions<DB>) {
    const db = checkKysely<DB>(options?.db);
    super({
      store: STORE,
      dialect: options.dialect ?? kyselyDialect(db),
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: async (text, values, tx) => answer(await (tx ?? db).executeQuery(rawQuery(text, values))),
      transaction: (work) => db.transaction().execute(work),
    });
  }
}

/** A migration as Kysely's Migrator takes it. */
export interface KyselyInboxMigration {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's migrations take a Kysely<any>, as its docs write them
  up(db: Kysely<any>): Promise<void>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  down(db: Kysely<any>): Promise<void>;
}

/**
 * The inbox table as a Kysely migration: `export const { up, down } = kyselyInboxMigration();` in a file of the
 * app's migrations folder (the Migrator's FileMigrationProvider), or as one entry of its own provider.
 */
export function kyselyInboxMigration(
  options: { table?: string; dialect?: 'postgres' | 'mysql' } = {},
): KyselyInboxMigration {
  const table = options.table ?? 'webhook_inbox';
  return {
    up: (db) => new KyselyDedupeStore({ db, table, ...options }).migrate(),
    down: async (db) => {
      await db.schema.dropTable(table).ifExists().execute();
    },
  };
}

/**
 * A statement as Kysely's CompiledQuery.raw builds it, without importing Kysely: the entry loads in an app
 * that does not have it. Its placeholders are the dialect's own.
 */
function rawQuery(sql: string, parameters: unknown[]): CompiledQuery {
  return Object.freeze({
    sql,
    parameters: Object.freeze(parameters),
    query: Object.freeze({
      kind: 'RawNode',
      sqlFragments: Object.freeze([sql]),
      parameters: Object.freeze([]),
    }),
    queryId: { queryId: globalThis.crypto.randomUUID() },
  }) as unknown as CompiledQuery;
}

function answer(result: { rows: unknown[]; numAffectedRows?: bigint }): SqlAnswer {
  return { rows: result.rows as SqlAnswer['rows'], affected: Number(result.numAffectedRows ?? 0) };
}

function checkKysely<DB>(db: unknown): Kysely<DB> {
  const candidate = db as Partial<Kysely<DB>>;
  if (
    typeof candidate?.executeQuery !== 'function' ||
    typeof candidate.transaction !== 'function' ||
    typeof candidate.getExecutor !== 'function'
  ) {
    throw new WebhookConfigError(
      `new KyselyDedupeStore({ db }) needs db: the app's Kysely instance (new Kysely<DB>({ dialect })), got ${kindOf(db)}.`,
    );
  }
  if (candidate.isTransaction === true) {
    throw new WebhookConfigError(
      'new KyselyDedupeStore({ db }) got a Kysely transaction: pass the Kysely instance; the store opens a transaction per event.',
    );
  }
  return candidate as Kysely<DB>;
}

function kyselyDialect(db: { getExecutor(): { adapter?: object } }): SqlDialect {
  const adapter = db.getExecutor().adapter?.constructor?.name;
  if (adapter === 'PostgresAdapter') return 'postgres';
  if (adapter === 'MysqlAdapter') return 'mysql';
  throw new WebhookConfigError(
    `new KyselyDedupeStore({ db }) supports PostgreSQL and MySQL/MariaDB, and cannot tell which this dialect (adapter ${JSON.stringify(String(adapter))}) speaks: pass dialect: 'postgres' or 'mysql'.`,
  );
}
