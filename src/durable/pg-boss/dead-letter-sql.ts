/**
 * The statements of pgBossDeadLetters. A dead letter is the copy pg-boss made in the dead-letter queue when
 * the job failed its last attempt (`source_id` is the job's id, `source_output` its error); the job itself
 * stays `failed` in its own queue under its id, which is what keeps a redelivery of the event a duplicate.
 * Each change is one statement, so it happens whole or not at all.
 */
export interface Tables {
  /** `"schema"."table"` of the queue's jobs. */
  jobs: string;
  /** `"schema"."table"` of the dead-letter queue's jobs. */
  dead: string;
  queueTable: string;
  /**
   * The schema has pg-boss's source_root_id (12.35 on), indexed: a copy of one of the receiver's jobs has its
   * job's id there too, so a copy is found through the index instead of among all the dead-letter queue's.
   */
  rooted: boolean;
}

/** The copies of the job (or jobs) `ids`. */
const copiesOf = (t: Tables, ids: string) =>
  t.rooted ? `d.source_root_id = ${ids} AND d.source_id = ${ids}` : `d.source_id = ${ids}`;

/** The dead-letter queue's copies of the queue's jobs: $1 dead-letter queue, $2 queue. */
const DEAD = `d.name = $1 AND d.source_name = $2 AND d.state IN ('created', 'retry', 'failed')`;

const COLUMNS = `d.data, d.source_id, d.source_created_on, d.created_on, d.source_retry_count, d.source_output`;

export const listSql = (t: Tables) =>
  `SELECT ${COLUMNS} FROM ${t.dead} d WHERE ${DEAD} ORDER BY d.created_on DESC, d.id LIMIT $3 OFFSET $4`;

export const oldestFirstSql = (t: Tables) =>
  `SELECT ${COLUMNS} FROM ${t.dead} d WHERE ${DEAD} ORDER BY d.created_on, d.id LIMIT $3 OFFSET $4`;

export const countSql = (t: Tables) => `SELECT count(*)::int AS n FROM ${t.dead} d WHERE ${DEAD}`;

/** $3: the job ids an id may stand for. */
export const findSql = (t: Tables) =>
  `SELECT ${COLUMNS} FROM ${t.dead} d WHERE ${DEAD} AND ${copiesOf(t, 'ANY($3::uuid[])')} ORDER BY d.created_on DESC`;

/** $1: the queue, $2: job ids. */
export const stateSql = (t: Tables) =>
  `SELECT state::text AS state FROM ${t.jobs} WHERE name = $1 AND id = ANY($2::uuid[])`;

/** The job's state before the statement ran, null without a job: $2 queue, $3 job id. */
const STATE_BEFORE = (t: Tables) =>
  `(SELECT state::text FROM ${t.jobs} WHERE name = $2 AND id = $3) AS state`;

/**
 * Replays one dead letter ($1 dead-letter queue, $2 queue, $3 job id): only a job that is failed (or
 * cancelled) goes back to `created`, with retry_count 0 and its keep_until counted from now, and only then is
 * its copy in the dead-letter queue deleted. A job that is waiting or running is left alone.
 */
export const replaySql = (t: Tables) => `
  WITH dead AS (
    SELECT d.id, d.data FROM ${t.dead} d WHERE ${DEAD} AND ${copiesOf(t, '$3')} FOR UPDATE
  ), reset AS (
    UPDATE ${t.jobs} j
       SET state = 'created', retry_count = 0, start_after = now(), started_on = NULL, completed_on = NULL,
           output = NULL, heartbeat_on = NULL, keep_until = now() + q.retention_seconds * interval '1s'
      FROM ${t.queueTable} q
     WHERE j.name = $2 AND j.id = $3 AND j.state IN ('failed', 'cancelled') AND q.name = j.name
       AND EXISTS (SELECT 1 FROM dead)
    RETURNING j.id
  ), dropped AS (
    DELETE FROM ${t.dead} WHERE name = $1 AND id IN (SELECT id FROM dead) AND EXISTS (SELECT 1 FROM reset)
  )
  SELECT (SELECT count(*) FROM reset)::int AS reset, (SELECT count(*) FROM dead)::int AS dead,
         -- The payload only when the job has to be sent anew (it left its queue), not with every replay.
         CASE WHEN NOT EXISTS (SELECT 1 FROM reset) THEN (SELECT data FROM dead LIMIT 1) END AS data,
         ${STATE_BEFORE(t)}`;

/** Deletes the dead-letter copies of a job ($3) that left the queue (retention) once it is back. */
export const dropCopiesSql = (t: Tables) => `DELETE FROM ${t.dead} d WHERE ${DEAD} AND ${copiesOf(t, '$3')}`;

/**
 * Purges one dead letter ($1 dead-letter queue, $2 queue, $3 job id): its copy, and the failed job itself;
 * a job that is waiting or running is never deleted.
 */
export const purgeSql = (t: Tables) => `
  WITH dead AS (
    DELETE FROM ${t.dead} d WHERE ${DEAD} AND ${copiesOf(t, '$3')} RETURNING d.id
  ), gone AS (
    DELETE FROM ${t.jobs} WHERE name = $2 AND id = $3 AND state IN ('failed', 'cancelled')
       AND EXISTS (SELECT 1 FROM dead)
    RETURNING id
  )
  SELECT (SELECT count(*) FROM dead)::int AS dead, ${STATE_BEFORE(t)}`;
