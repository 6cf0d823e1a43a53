import { WebhookConfigError } from '../base/errors.js';

/*
 * The status table's SQL, generated for a table name. sql/message_status.sql is this output for the default name
 * (a test keeps the two equal), for teams that apply migrations with their own tool.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

export interface StatusTable {
  ref: string;
  name: string;
}

/** Names are checked, then quoted: nothing from options reaches SQL unchecked. */
export function statusTable(table: string, schema?: string): StatusTable {
  for (const [what, name] of [
    ['table', table],
    ['schema', schema],
  ] as const) {
    if (name === undefined && what === 'schema') continue;
    if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
      throw new WebhookConfigError(
        `new PostgresStatusStore({ ${what} }): ${what} must be letters, digits and underscores (not starting with a digit, at most 48), got ${JSON.stringify(name)}.`,
      );
    }
  }
  return { ref: schema === undefined ? `"${table}"` : `"${schema}"."${table}"`, name: table };
}

/**
 * Idempotent DDL. One row per message: `record` is the tracker's record, the other columns what the store
 * queries by. `final_at` is when the row became final (the database's clock), for retention.
 */
export function createStatusSql({ ref, name }: StatusTable): string {
  return `CREATE TABLE IF NOT EXISTS ${ref} (
  message_id text PRIMARY KEY,
  version integer NOT NULL,
  status text NOT NULL,
  final boolean NOT NULL,
  expected_at bigint NOT NULL,
  final_at timestamptz,
  record jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS "${name}_open_idx" ON ${ref} (expected_at) WHERE NOT final;
CREATE INDEX IF NOT EXISTS "${name}_final_at_idx" ON ${ref} (final_at) WHERE final;
`;
}

const expiredRow = (alias: string) =>
  `(${alias}.final AND ${alias}.final_at < now() - $7::float8 * interval '1 millisecond')`;

/**
 * Compare and set in one statement: insert the message, or update it only when its version is the one the writer
 * read ($6) or it is past retention (then it counts as gone). The row lock of ON CONFLICT makes it atomic.
 */
export function writeSql({ ref }: StatusTable): string {
  return `INSERT INTO ${ref} AS kept (message_id, version, status, final, expected_at, final_at, record)
VALUES ($1, $2, $3, $4, $5, CASE WHEN $4 THEN now() END, $8::jsonb)
ON CONFLICT (message_id) DO UPDATE
  SET version = excluded.version, status = excluded.status, final = excluded.final,
    expected_at = excluded.expected_at, record = excluded.record, updated_at = now(),
    final_at = CASE WHEN NOT excluded.final THEN NULL
      WHEN kept.final AND NOT ${expiredRow('kept')} THEN kept.final_at ELSE now() END
  WHERE kept.version = $6 OR ${expiredRow('kept')}
RETURNING 1`;
}

export function readSql({ ref }: StatusTable): string {
  return `SELECT record FROM ${ref} AS kept WHERE message_id = $1
  AND NOT (kept.final AND kept.final_at < now() - $2::float8 * interval '1 millisecond')`;
}

export function openSql({ ref }: StatusTable): string {
  return `SELECT record FROM ${ref} WHERE NOT final AND expected_at <= $1 ORDER BY expected_at LIMIT $2`;
}

export function countOpenSql({ ref }: StatusTable): string {
  return `SELECT count(*)::float8 AS open FROM ${ref} WHERE NOT final`;
}

export function purgeSql({ ref }: StatusTable): string {
  return `DELETE FROM ${ref} WHERE message_id IN (
  SELECT message_id FROM ${ref} WHERE final AND final_at < now() - $1::float8 * interval '1 millisecond' LIMIT $2
)`;
}
