import type { Knex } from 'knex';
import { kindOf, WebhookConfigError } from '../base/errors.js';
import { type SqlDialect, SqlInbox } from './sql-inbox.js';
import { driverAnswer } from './sql-inbox-sql.js';

export interface KnexDedupeStoreOptions {
  /** The app's Knex instance, on PostgreSQL (`client: 'pg'`) or MySQL/MariaDB (`client: 'mysql2'`). */
  knex: Knex;
  /** The inbox table. Default `webhook_inbox`. */
  table?: string;
  /** Longest wait for one claim, renewal, completion or release (milliseconds, default 3000). */
  operationTimeoutMs?: number;
}

const STORE = 'KnexDedupeStore';
const MIGRATION = "the migration of knexInboxMigration() from 'messaging-webhooks/knex'";

/**
 * Dedupe store on the app's Knex: the inbox table of the PostgreSQL or MySQL store, and the handlers run in a
 * Knex transaction that also records the completion. Handlers get that `Knex.Transaction` as ctx.tx: their
 * writes through it commit exactly once, together with the "processed" mark, or roll back with it.
 */
export class KnexDedupeStore extends SqlInbox<Knex.Transaction> {
  constructor(options: KnexDedupeStoreOptions) {
    const knex = checkKnex(options?.knex);
    const dialect = knexDialect(knex);
    super({
      store: STORE,
      dialect,
      table: options.table ?? 'webhook_inbox',
      migration: MIGRATION,
      operationTimeoutMs: options.operationTimeoutMs,
      run: async (text, values, tx) =>
        driverAnswer(await (tx ?? knex).raw(...positional(dialect, text, values))),
      transaction: (work) => knex.transaction(work),
    });
  }
}

/**
 * The inbox table as a Knex migration: `export const { up, down } = knexInboxMigration();` in a file of the
 * app's migrations directory creates it with the app's other tables (`npx knex migrate:latest`).
 */
export function knexInboxMigration(options: { table?: string } = {}): {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
} {
  const table = options.table ?? 'webhook_inbox';
  return {
    up: (knex) => new KnexDedupeStore({ knex, table }).migrate(),
    down: async (knex) => {
      await knex.schema.dropTableIfExists(table);
    },
  };
}

/** A Knex statement: `$n` placeholders (PostgreSQL's, which may repeat) become Knex's positional `?`. */
function positional(dialect: SqlDialect, text: string, values: unknown[]): [string, Knex.RawBinding[]] {
  if (dialect === 'mysql') return [text, values as Knex.RawBinding[]];
  const bindings: Knex.RawBinding[] = [];
  const sql = text.replace(/\$(\d+)/g, (_match, n: string) => {
    bindings.push(values[Number(n) - 1] as Knex.RawBinding);
    return '?';
  });
  return [sql, bindings];
}

function checkKnex(knex: unknown): Knex {
  const candidate = knex as Partial<Knex> & { isTransaction?: boolean };
  if (
    typeof candidate?.raw !== 'function' ||
    typeof candidate.transaction !== 'function' ||
    !candidate.client
  ) {
    throw new WebhookConfigError(
      `new KnexDedupeStore({ knex }) needs knex: the app's Knex instance (knex({ client: 'pg', connection })), got ${kindOf(knex)}.`,
    );
  }
  if (candidate.isTransaction === true) {
    throw new WebhookConfigError(
      'new KnexDedupeStore({ knex }) got a Knex transaction: pass the Knex instance; the store opens a transaction per event.',
    );
  }
  return candidate as Knex;
}

function knexDialect(knex: Knex): SqlDialect {
  const { dialect, driverName } = knex.client as { dialect?: unknown; driverName?: unknown };
  if (dialect === 'postgresql' || driverName === 'pg') return 'postgres';
  if (dialect === 'mysql' || dialect === 'mysql2' || driverName === 'mysql2') return 'mysql';
  throw new WebhookConfigError(
    `new KnexDedupeStore({ knex }) supports Knex on PostgreSQL (client 'pg') and MySQL/MariaDB (client 'mysql2'), got client ${JSON.stringify(String(driverName ?? dialect))}.`,
  );
}
