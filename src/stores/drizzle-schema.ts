import { sql } from 'drizzle-orm';
import { datetime, index as mysqlIndex, mysqlTable, varbinary, varchar } from 'drizzle-orm/mysql-core';
import { check, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/*
 * The inbox table of DrizzleDedupeStore as Drizzle table definitions, for the app's schema: drizzle-kit then
 * generates its migration with the app's own tables. Each is the table sql/webhook_inbox.sql (PostgreSQL) or
 * sql/webhook_inbox.mysql.sql (MySQL/MariaDB) creates; the store reads and writes it with its own statements.
 */

/** The PostgreSQL inbox table under `name` (default `webhook_inbox`). */
export function pgWebhookInbox<N extends string = 'webhook_inbox'>(name: N = 'webhook_inbox' as N) {
  return pgTable(
    name,
    {
      key: text('key').primaryKey(),
      state: text('state').notNull(),
      token: text('token'),
      expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
      updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    },
    (table) => [
      index(`${name}_expires_at_idx`).on(table.expiresAt),
      check(`${name}_state_check`, sql`${table.state} IN ('processing', 'completed')`),
    ],
  );
}

/** The MySQL/MariaDB inbox table under `name` (default `webhook_inbox`). Keys compare byte for byte. */
export function mysqlWebhookInbox<N extends string = 'webhook_inbox'>(name: N = 'webhook_inbox' as N) {
  return mysqlTable(
    name,
    {
      key: varbinary('key', { length: 255 }).primaryKey(),
      state: varchar('state', { length: 10 }).notNull(),
      token: varchar('token', { length: 64 }),
      expiresAt: datetime('expires_at', { fsp: 3 }).notNull(),
      updatedAt: datetime('updated_at', { fsp: 3 }).notNull().default(sql`CURRENT_TIMESTAMP(3)`),
    },
    (table) => [mysqlIndex(`${name}_expires_at_idx`).on(table.expiresAt)],
  );
}

/** `webhook_inbox` on PostgreSQL: `export { webhookInbox } from 'messaging-webhooks/drizzle-schema'` in the schema. */
export const webhookInbox = pgWebhookInbox();
/** `webhook_inbox` on MySQL/MariaDB. */
export const webhookInboxMysql = mysqlWebhookInbox();
