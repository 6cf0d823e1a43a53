/**
 * The ledger's statements. One row per event of a queue: its state (`queued`, `retrying` with its due time,
 * `running` under a run token and lease, `completed` until its dedupe window ends, `dead` until replayed or
 * purged), the job as JSON text (text, not jsonb: an event may hold a NUL or a lone surrogate, which
 * JSON.stringify escapes and jsonb refuses), and its attempts and last error. The key and the error's message
 * are JSON text for the same reason.
 */

/** A table name as given, quoted once; refused unless it is a plain (optionally schema-qualified) name. */
export function quotedTable(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

export const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

export function ledgerStatements(table: string) {
  const t = quotedTable(table);
  const index = (suffix: string) => `"${table.replaceAll('.', '_')}_${suffix}"`;
  return {
    create: createStatements(t, index),
    /**
     * A new event: the row is written (a row count of 1), and the caller publishes. A key already in the table
     * writes nothing, and `readmit` decides. Kept apart from readmit because a new event is the common case,
     * and a plain insert costs PostgreSQL less than an upsert with a condition.
     */
    admit: `INSERT INTO ${t} (queue, key, state, job) VALUES ($1, $2, 'queued', $3) ON CONFLICT (queue, key) DO NOTHING`,
    /**
     * An event whose dedupe window ended, or one queued so long ago ($4 ms) that its handoff may never have
     * reached the broker (a receiver that died between its row and the broker's confirm): the row is
     * rewritten (a row count of 1), and the caller publishes. Else nothing is written.
     */
    readmit: `UPDATE ${t} AS l SET state = 'queued', job = $3, changed_at = now(),
        attempt = CASE WHEN l.state = 'completed' THEN 0 ELSE l.attempt END,
        enqueued_at = CASE WHEN l.state = 'completed' THEN now() ELSE l.enqueued_at END,
        expires_at = NULL, run_token = NULL, lease_until = NULL
      WHERE l.queue = $1 AND l.key = $2
        AND ((l.state = 'completed' AND l.expires_at <= now())
          OR (l.state IN ('queued', 'retrying') AND l.changed_at <= now() - make_interval(secs => $4 / 1000.0)))`,
    stateOf: `SELECT state FROM ${t} WHERE queue = $1 AND key = $2`,
    /** A handoff the broker refused: the row goes, so the service's retry hands the event off again. */
    withdraw: `DELETE FROM ${t} WHERE queue = $1 AND key = $2 AND state = 'queued' AND attempt = 0`,
    /**
     * A worker takes the event for one attempt under its token: queued, due for its retry, or running under a
     * lease that ran out (its worker died). Returns the attempt it is.
     */
    claim: `UPDATE ${t} SET state = 'running', attempt = attempt + 1, run_token = $3,
        lease_until = now() + make_interval(secs => $4 / 1000.0), changed_at = now()
      WHERE queue = $1 AND key = $2 AND (state = 'queued'
        OR (state = 'retrying' AND changed_at <= now())
        OR (state = 'running' AND lease_until < now()))
      RETURNING attempt, state`,
    complete: `UPDATE ${t} SET state = 'completed', run_token = NULL, lease_until = NULL, changed_at = now(),
        expires_at = now() + make_interval(secs => $4 / 1000.0), error_code = NULL, error_message = NULL
      WHERE queue = $1 AND key = $2 AND run_token = $3`,
    /** The attempt failed and another is due in $4 ms. */
    retry: `UPDATE ${t} SET state = 'retrying', run_token = NULL, lease_until = NULL,
        changed_at = now() + make_interval(secs => $4 / 1000.0), error_code = $5, error_message = $6
      WHERE queue = $1 AND key = $2 AND run_token = $3`,
    /** The last attempt failed: a dead letter, kept until replayed or purged. */
    bury: `UPDATE ${t} SET state = 'dead', run_token = NULL, lease_until = NULL, changed_at = now(),
        error_code = $4, error_message = $5
      WHERE queue = $1 AND key = $2 AND (run_token = $3 OR ($3 IS NULL AND state <> 'completed'))`,
    counts: `SELECT state, count(*)::integer AS n FROM ${t} WHERE queue = $1 AND state <> 'completed' GROUP BY state`,
    sweep: `DELETE FROM ${t} WHERE ctid IN (SELECT ctid FROM ${t}
      WHERE queue = $1 AND state = 'completed' AND expires_at <= now() LIMIT 1000)`,
    listDead: (oldestFirst: boolean) =>
      `SELECT key, job, attempt, enqueued_at, changed_at, error_code, error_message FROM ${t}
        WHERE queue = $1 AND state = 'dead'
        ORDER BY changed_at ${oldestFirst ? 'ASC' : 'DESC'}, key LIMIT $2 OFFSET $3`,
    countDead: `SELECT count(*)::integer AS n FROM ${t} WHERE queue = $1 AND state = 'dead'`,
    findDead: `SELECT key, job, attempt, enqueued_at, changed_at, error_code, error_message FROM ${t}
      WHERE queue = $1 AND key = ANY($2) AND state = 'dead' ORDER BY changed_at DESC`,
    statesOf: `SELECT key, state FROM ${t} WHERE queue = $1 AND key = ANY($2)`,
    /** A dead letter back to queued, attempts reset: exactly one of a replay and a purge finds it dead. */
    reopen: `UPDATE ${t} SET state = 'queued', attempt = 0, changed_at = now()
      WHERE queue = $1 AND key = $2 AND state = 'dead' RETURNING job`,
    /** A replay the broker refused: the dead letter is one again. */
    restore: `UPDATE ${t} SET state = 'dead' WHERE queue = $1 AND key = $2 AND state = 'queued' AND attempt = 0`,
    purge: `DELETE FROM ${t} WHERE queue = $1 AND key = $2 AND state = 'dead'`,
    dropQueue: `DELETE FROM ${t} WHERE queue = $1`,
  };
}

/** The ledger's table and its two partial indexes: the live rows by state, the completed ones by expiry. */
function createStatements(t: string, index: (suffix: string) => string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (
      queue text NOT NULL,
      key text NOT NULL,
      state text NOT NULL,
      job text NOT NULL,
      attempt integer NOT NULL DEFAULT 0,
      run_token text,
      lease_until timestamptz,
      enqueued_at timestamptz NOT NULL DEFAULT now(),
      changed_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      error_code text,
      error_message text,
      PRIMARY KEY (queue, key))`,
    `CREATE INDEX IF NOT EXISTS ${index('live')} ON ${t} (queue, state, changed_at) WHERE state <> 'completed'`,
    `CREATE INDEX IF NOT EXISTS ${index('expiry')} ON ${t} (queue, expires_at) WHERE state = 'completed'`,
  ];
}

export type LedgerStatements = ReturnType<typeof ledgerStatements>;
