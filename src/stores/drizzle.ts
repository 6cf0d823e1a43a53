import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlDialect, SqlInbox } from './sql-inbox.js';
import { driverAnswer } from './sql-inbox-sql.js';

/** The members of a Drizzle database (PostgreSQL or MySQL) the store uses. */
export interface DrizzleDatabase {
  // biome-ignore lint/suspicious/noExplicitAny: each Drizzle driver types its transaction and result its own way
  transaction(work: (tx: any) => Promise<any>, config?: any): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  execute(query: any): PromiseLike<unknown>;
}

/** What handlers get as ctx.tx: the `tx` Drizzle's `db.transaction()` hands its callback, typed by the app's db. */
export type DrizzleTx<D extends DrizzleDatabase> = Parameters<Parameters<D['transaction']>[0]>[0];

export interface DrizzleDedupeStoreOptions<D extends DrizzleDatabase> {
  /** The app's Drizzle database: `drizzle(pool)` of `drizzle-orm/node-postgres` or `drizzle-orm/mysql2`. */
  db: D;
  /** The inbox table. Default `webhook_inbox` (as `webhookInbox` of `messaging-webhooks/drizzle-schema`). */
  table?: string;
  /** The database, when Drizzle's dialect object does not say (a wrapper around the db). */
  dialect?: 'postgres' | 'mysql';
  /** Longest wait for one claim, renewal, completion or release (milliseconds, default 3000). */
  operationTimeoutMs?: number;
}

const STORE = 'DrizzleDedupeStore';
const MIGRATION =
  "the migration drizzle-kit generates from webhookInbox of 'messaging-webhooks/drizzle-schema' (or sql/webhook_inbox*.sql)";

type Sql = (strings: TemplateStringsArray, ...params: unknown[]) => unknown;
/** drizzle-orm's `sql` tag, imported when first needed: the entry loads in an app without drizzle-orm. */
let sqlTag: Promise<Sql> | undefined;
const loadSql = () => {
  sqlTag ??= import('drizzle-orm').then((drizzle) => drizzle.sql as unknown as Sql);
  return sqlTag;
};

/**
 * Dedupe store on the app's Drizzle database: the inbox table of the PostgreSQL or MySQL store, and the handlers
 * run in a Drizzle transaction that also records the completion. Handlers get that `tx` as ctx.tx: their writes
 * through it commit exactly once, together with the "processed" mark, or roll back with it.
 */
export class DrizzleDedupeStore<D extends DrizzleDatabase> extends SqlInbox<DrizzleTx<D>> {
  constructor(options: DrizzleDedupeStoreOptions<D>) {
    const db = checkDrizzle(options?.db);
    const dialect = options.dialect ?? drizzleDialect(db);
    super({
      store: STORE,
      dialect,
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: async (text, values, tx) => {
        const query = statement(await loadSql(), dialect, text, values);
        return driverAnswer(await ((tx ?? db) as DrizzleDatabase).execute(query));
      },
      transaction: (work) => db.transaction(work),
    });
  }
}

/** The statement as Drizzle's `sql` tag builds it: the text between placeholders, each value a parameter. */
function statement(sql: Sql, dialect: SqlDialect, text: string, values: unknown[]): unknown {
  const parts: string[] = [];
  const params: unknown[] = [];
  const placeholder = dialect === 'postgres' ? /\$(\d+)/g : /\?/g;
  let from = 0;
  let n = 0;
  for (const match of text.matchAll(placeholder)) {
    parts.push(text.slice(from, match.index));
    params.push(values[match[1] === undefined ? n++ : Number(match[1]) - 1]);
    from = (match.index ?? 0) + match[0].length;
  }
  parts.push(text.slice(from));
  return sql(Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray, ...params);
}

function checkDrizzle<D extends DrizzleDatabase>(db: unknown): D {
  const candidate = db as Partial<DrizzleDatabase> & { _?: unknown; rollback?: unknown };
  if (typeof candidate?.execute !== 'function' || typeof candidate.transaction !== 'function') {
    throw new WebhookConfigError(
      `new DrizzleDedupeStore({ db }) needs db: the app's Drizzle database (drizzle(pool) of drizzle-orm/node-postgres or drizzle-orm/mysql2), got ${kindOf(db)}.`,
    );
  }
  if (typeof candidate.rollback === 'function') {
    throw new WebhookConfigError(
      'new DrizzleDedupeStore({ db }) got a Drizzle transaction: pass the database; the store opens a transaction per event.',
    );
  }
  return candidate as D;
}

function drizzleDialect(db: object): SqlDialect {
  const dialect = (db as { dialect?: { constructor?: Record<symbol, unknown> & { name?: string } } }).dialect;
  const kind = dialect?.constructor?.[Symbol.for('drizzle:entityKind')] ?? dialect?.constructor?.name;
  if (kind === 'PgDialect') return 'postgres';
  if (kind === 'MySqlDialect') return 'mysql';
  throw new WebhookConfigError(
    `new DrizzleDedupeStore({ db }) supports Drizzle on PostgreSQL and MySQL/MariaDB, got a database of dialect ${JSON.stringify(String(kind))}: pass dialect: 'postgres' or 'mysql' if it speaks one of them.`,
  );
}
