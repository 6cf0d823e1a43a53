import { createHash } from 'node:crypto';
import { WebhookConfigError } from '../base/errors.js';
import { storedKey } from './postgres-sql.js';

/*
 * The MySQL/MariaDB inbox table's SQL, generated for a table name. sql/webhook_inbox.mysql.sql is this output for
 * the default name (a test keeps the two equal), for teams that apply migrations with their own tool. Times are
 * UTC_TIMESTAMP(3), never NOW(): the session time zone of each app instance must not move a lease.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** The quoted table name used in statements; the unquoted one names its index. */
export interface MysqlInboxTable {
  ref: string;
  name: string;
}

/** Names are checked, then quoted: nothing from options reaches SQL unchecked. */
export function mysqlInboxTable(store: string, table: string): MysqlInboxTable {
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new WebhookConfigError(
      `new ${store}({ table }): table must be letters, digits and underscores (not starting with a digit, at most 48), got ${JSON.stringify(table)}.`,
    );
  }
  return { ref: `\`${table}\``, name: table };
}

/**
 * Idempotent DDL. `key` is VARBINARY so that keys compare byte for byte (a case-insensitive collation would
 * make `evt_A` a duplicate of `evt_a`); `expires_at` is the lease end while processing, the retention end once
 * completed.
 */
export function createMysqlInboxSql({ ref, name }: MysqlInboxTable): string {
  return `CREATE TABLE IF NOT EXISTS ${ref} (
  \`key\` VARBINARY(255) NOT NULL PRIMARY KEY,
  state VARCHAR(10) NOT NULL,
  token VARCHAR(64) NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  INDEX \`${name}_expires_at_idx\` (expires_at)
) ENGINE=InnoDB;
`;
}

const later = (param = '?') => `UTC_TIMESTAMP(3) + INTERVAL ${param} * 1000 MICROSECOND`;

/** The claim's three statements: a new key is taken by the first (one round trip), an expired one by the second. */
export function mysqlStatements({ ref }: MysqlInboxTable) {
  return {
    /** 1 row affected: the key was new and is now claimed; 0: it exists. */
    insert: `INSERT IGNORE INTO ${ref} (\`key\`, state, token, expires_at) VALUES (?, 'processing', ?, ${later()})`,
    /** 1 row affected: the lease or retention had ended and the key is now claimed. */
    takeOver: `UPDATE ${ref} SET state = 'processing', token = ?, expires_at = ${later()}, updated_at = UTC_TIMESTAMP(3)
WHERE \`key\` = ? AND expires_at <= UTC_TIMESTAMP(3)`,
    /** Why the key could not be claimed: completed (duplicate) or held (in flight), with the time left. */
    read: `SELECT state, CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) / 1000) AS left_ms
FROM ${ref} WHERE \`key\` = ?`,
    complete: `UPDATE ${ref} SET state = 'completed', token = NULL, expires_at = ${later()}, updated_at = UTC_TIMESTAMP(3)
WHERE \`key\` = ? AND token = ? AND state = 'processing'`,
    renew: `UPDATE ${ref} SET expires_at = ${later()}, updated_at = UTC_TIMESTAMP(3)
WHERE \`key\` = ? AND token = ? AND state = 'processing'`,
    release: `DELETE FROM ${ref} WHERE \`key\` = ? AND token = ? AND state = 'processing'`,
    purge: `DELETE FROM ${ref} WHERE expires_at < UTC_TIMESTAMP(3) - INTERVAL 1 HOUR LIMIT ?`,
  };
}

export type MysqlStatements = ReturnType<typeof mysqlStatements>;

/** The longest key stored as it is; a longer one is stored as its SHA-256 (VARBINARY(255) holds the key). */
const MAX_KEY_BYTES = 255;

/**
 * The key as the MySQL inbox stores it: as PostgreSQL stores it (a NUL or a lone surrogate spelled as JSON),
 * UTF-8. A longer one becomes `#sha256:` and its hash: every key the receiver makes starts with its mode or
 * `tenant:`, so none equals a hashed one.
 */
export function mysqlStoredKey(key: string): Buffer {
  const bytes = Buffer.from(storedKey(key), 'utf8');
  if (bytes.length <= MAX_KEY_BYTES) return bytes;
  return Buffer.from(`#sha256:${createHash('sha256').update(bytes).digest('hex')}`, 'utf8');
}

/** What a read of the key answers, as a claim result (no row: released just now, so try again in a lease). */
export function notClaimed(
  row: { state?: unknown; left_ms?: unknown } | undefined,
  leaseMs: number,
): { status: 'duplicate' } | { status: 'in_flight'; retryAfterMs: number } {
  const left = Number(row?.left_ms ?? 0);
  if (row?.state === 'completed' && left > 0) return { status: 'duplicate' };
  return { status: 'in_flight', retryAfterMs: left > 0 ? left : leaseMs };
}

/** MySQL's errors that say the inbox table is not there. */
export function isMissingTable(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return code === 'ER_NO_SUCH_TABLE' || errno === 1146;
}

/** The message for a missing table, naming what creates it. */
export function missingTableMessage(table: { name: string }, migration: string): string {
  return (
    `The inbox table ${table.name} does not exist: run \`await store.migrate()\` once at startup, or apply ` +
    `${migration}.`
  );
}
