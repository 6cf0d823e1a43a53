import { withDeadline } from '../../base/deadline.js';
import { startPoller } from '../../base/poller.js';
import type { DeadLetterCode } from '../../contract/errors.js';
import type { DurableJob } from '../port.js';
import { jobOf } from './job-data.js';
import type { PgBossDurableQueue } from './queue.js';

/** A job pg-boss sent to the dead-letter on its own, with no worker alive to tell onError. */
export interface SilentDeadLetter {
  job: DurableJob;
  reason: DeadLetterCode;
  /** pg-boss's own words: "job heartbeat timeout" or "job timed out". */
  cause: Error;
  attempt: number;
  attempts: number;
}

const CHECK_DEADLINE_MS = 3000;

/**
 * pg-boss fails a job whose worker stopped beating (killed, frozen) or that outlived its expiry on its
 * supervise pass, with no event in any process; on the last attempt the job goes to the dead-letter unheard.
 * Every worker looks for such jobs as often as that pass runs. One atomic UPDATE marks each as reported
 * (a member of its output, which pg-boss writes once and never reads back), so exactly one worker tells
 * onError about each, however many look at once.
 */
export function watchSilentDeadLetters(
  queue: PgBossDurableQueue,
  report: (deadLetter: SilentDeadLetter) => Promise<void>,
): () => void {
  const check = async () => {
    try {
      const found = await withDeadline(
        takeSilentDeadLetters(queue),
        CHECK_DEADLINE_MS,
        'Looking for dead letters',
      );
      for (const deadLetter of found) await report(deadLetter);
    } catch {
      // The next pass looks again: the jobs stay unreported until one succeeds.
    }
  };
  const poller = startPoller(check, queue.superviseIntervalMs);
  return () => poller.stop();
}

async function takeSilentDeadLetters(queue: PgBossDurableQueue): Promise<SilentDeadLetter[]> {
  const table = (await queue.boss.getQueue(queue.name))?.table;
  if (table === undefined) return [];
  const { rows } = await queue.boss.getDb().executeSql(
    `UPDATE "${queue.schema}"."${table}"
        SET output = output || '{"reported":true}'::jsonb
      WHERE name = $1 AND state = 'failed'
        AND output->'value'->>'message' IN ('job heartbeat timeout', 'job timed out')
        AND NOT output ? 'reported'
      RETURNING data, retry_count, retry_limit, output->'value'->>'message' AS message`,
    [queue.name],
  );
  return rows.map((row) => ({
    job: jobOf(row.data),
    reason: 'job_stalled',
    cause: new Error(`pg-boss: ${String(row.message)}`),
    attempt: Number(row.retry_count) + 1,
    attempts: Number(row.retry_limit) + 1,
  }));
}
