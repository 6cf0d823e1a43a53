import { EntitySchema } from 'typeorm';

/*
 * The inbox table of TypeOrmDedupeStore as a TypeORM entity, for the app's DataSource `entities`: TypeORM's
 * `migration:generate` (or `synchronize`) then creates it with the app's own tables. It is the table
 * sql/webhook_inbox.sql (PostgreSQL) or sql/webhook_inbox.mysql.sql (MySQL/MariaDB) creates; the store reads and
 * writes it with its own statements, never through this entity.
 */

/** One row of the inbox, as the entity reads it. */
export interface WebhookInboxRow {
  key: string | Uint8Array;
  state: 'processing' | 'completed';
  token: string | null;
  expiresAt: Date;
  updatedAt: Date;
}

/** The inbox table on `dialect` under `table` (default `webhook_inbox`). Keys compare byte for byte on MySQL. */
export function webhookInboxEntity(
  dialect: 'postgres' | 'mysql',
  table = 'webhook_inbox',
): EntitySchema<WebhookInboxRow> {
  const postgres = dialect === 'postgres';
  return new EntitySchema<WebhookInboxRow>({
    name: `WebhookInbox_${table}`,
    tableName: table,
    columns: {
      key: postgres ? { type: 'text', primary: true } : { type: 'varbinary', length: 255, primary: true },
      state: postgres ? { type: 'text' } : { type: 'varchar', length: 10 },
      token: postgres ? { type: 'text', nullable: true } : { type: 'varchar', length: 64, nullable: true },
      expiresAt: postgres
        ? { name: 'expires_at', type: 'timestamptz' }
        : { name: 'expires_at', type: 'datetime', precision: 3 },
      updatedAt: postgres
        ? { name: 'updated_at', type: 'timestamptz', default: () => 'now()' }
        : { name: 'updated_at', type: 'datetime', precision: 3, default: () => 'CURRENT_TIMESTAMP(3)' },
    },
    indices: [{ name: `${table}_expires_at_idx`, columns: ['expiresAt'] }],
    ...(postgres && {
      checks: [{ name: `${table}_state_check`, expression: "state IN ('processing', 'completed')" }],
    }),
  });
}
