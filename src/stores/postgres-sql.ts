import { WebhookConfigError } from '../base/errors.js';
import { wellFormedKey } from './lossless-key.js';

/*
 * The inbox table's SQL, generated for a table name. sql/webhook_inbox.sql is this output for the default
 * name (a test keeps the two equal), for teams that apply migrations with their own tool.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

export interface InboxTable {
  /** The quoted, schema-qualified name used in statements. */
  ref: string;
  /** The unquoted table name, for naming its index. */
  name: string;
}

/** Names are checked, then quoted: nothing from options reaches SQL unchecked. */
export function inboxTable(table: string, schema?: string): InboxTable {
  check('table', table);
  if (schema !== undefined) check('schema', schema);
  const ref = schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
  return { ref, name: table };
}

function check(what: string, name: unknown): void {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new WebhookConfigError(
      `new PostgresDedupeStore({ ${what} }): ${what} must be letters, digits and underscores (not starting with a digit, at most 48), got ${JSON.stringify(name)}.`,
    );
  }
}

/** Idempotent DDL. `expires_at` is the lease end while processing, and the retention end once completed. */
export function createInboxSql({ ref, name }: InboxTable): string {
  return `CREATE TABLE IF NOT EXISTS ${ref} (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('processing', 'completed')),
  token text,
  expires_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS "${name}_expires_at_idx" ON ${ref} (expires_at);
`;
}

const ms = (param: string) => `now() + ${param}::float8 * interval '1 millisecond'`;

/**
 * One statement: take the key when it is new or its lease/retention has expired (the row lock taken by ON
 * CONFLICT makes this atomic), else read why not. The read uses the statement's snapshot, so a row
 * inserted concurrently by another claim is invisible to it: that case is reported in flight.
 */
export function claimSql({ ref }: InboxTable): string {
  return `WITH claimed AS (
  INSERT INTO ${ref} AS inbox (key, state, token, expires_at)
  VALUES ($1::text, 'processing', $2::text, ${ms('$3')})
  ON CONFLICT (key) DO UPDATE
    SET state = 'processing', token = excluded.token, expires_at = excluded.expires_at, updated_at = now()
    WHERE inbox.expires_at <= now()
  RETURNING 1
)
SELECT CASE
    WHEN EXISTS (SELECT 1 FROM claimed) THEN 'claimed'
    WHEN seen.state = 'completed' AND seen.expires_at > now() THEN 'duplicate'
    ELSE 'in_flight'
  END AS status,
  ceil(extract(epoch FROM seen.expires_at - now()) * 1000)::float8 AS retry_after_ms
FROM (SELECT 1) AS one LEFT JOIN ${ref} AS seen ON seen.key = $1::text`;
}

/** The completion of a held claim; `until` is when its retention ends ($3 in milliseconds unless given). */
export function completeSql({ ref }: InboxTable, until = ms('$3')): string {
  return `UPDATE ${ref} SET state = 'completed', token = NULL, expires_at = ${until}, updated_at = now()
WHERE key = $1 AND token = $2 AND state = 'processing'`;
}

export function renewSql({ ref }: InboxTable): string {
  return `UPDATE ${ref} SET expires_at = ${ms('$3')}, updated_at = now()
WHERE key = $1 AND token = $2 AND state = 'processing'`;
}

export function releaseSql({ ref }: InboxTable): string {
  return `DELETE FROM ${ref} WHERE key = $1 AND token = $2 AND state = 'processing'`;
}

/** Expired an hour ago: a handler that ran past its lease can still complete a lease nobody took over. */
export function purgeSql({ ref }: InboxTable): string {
  return `DELETE FROM ${ref} WHERE key IN (
  SELECT key FROM ${ref} WHERE expires_at < now() - interval '1 hour' LIMIT $1
)`;
}

/**
 * The key as the inbox table stores it. A key PostgreSQL's text cannot hold (a NUL, a lone surrogate, from an
 * event id a sender chose) is stored as its JSON string, quotes included: one-to-one with the key, and apart
 * from every key the receiver makes otherwise, each of which starts with its mode.
 */
export function storedKey(key: string): string {
  return key.includes('\0') ? JSON.stringify(key) : wellFormedKey(key);
}
