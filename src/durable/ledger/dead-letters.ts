import {
  candidateKeys,
  type DeadLetter,
  type DeadLetterEngine,
  deadLetterId,
  failureReason,
  type SkippedDeadLetter,
  skipped,
} from '../dead-letters.js';
import type { DurableJob, JobEngine } from '../port.js';
import type { Ledger, LedgerDeadRow } from './ledger.js';

/**
 * The dead letters of a broker queue, kept in its ledger: a replay turns the row back to queued (only a row
 * still dead: of a replay and a purge of one dead letter exactly one acts) and publishes the job again; a
 * replay the broker refused makes it a dead letter again.
 */
export function ledgerDeadLetters(
  ledger: Ledger,
  engine: JobEngine,
  publish: (job: DurableJob) => Promise<void>,
  close: () => Promise<void>,
): DeadLetterEngine {
  const toDeadLetter = (row: LedgerDeadRow): DeadLetter => ({
    id: deadLetterId(row.job),
    key: row.key,
    jobId: row.key,
    mode: row.job.ctx?.mode ?? row.key.split(':')[0] ?? 'live',
    event: row.job.event,
    error: { reason: failureReason(row.errorMessage, engine, row.errorCode), message: row.errorMessage },
    attempts: row.attempt,
    enqueuedAt: row.enqueuedAt,
    failedAt: row.failedAt,
  });

  async function absent(id: string): Promise<SkippedDeadLetter> {
    const keys = candidateKeys(id);
    const states = await ledger.statesOf(keys);
    for (const key of keys) {
      const state = states.get(key);
      if (state === undefined || state === 'dead') continue;
      return state === 'completed' ? skipped.completed(id) : skipped.live(id);
    }
    return skipped.notFound(id);
  }

  return {
    engine,
    async list(limit, offset, oldestFirst = false) {
      return (await ledger.listDead(limit, offset, oldestFirst)).map(toDeadLetter);
    },
    count: () => ledger.countDead(),
    async find(id) {
      return (await ledger.findDead(candidateKeys(id))).map(toDeadLetter);
    },
    absent,
    async replay(entry) {
      const job = await ledger.reopen(entry.key);
      if (!job) return { ...(await absent(entry.key)), id: entry.id };
      try {
        await publish(job);
      } catch (error) {
        await ledger.restore(entry.key);
        throw error;
      }
      return undefined;
    },
    async purge(entry) {
      if (await ledger.purge(entry.key)) return undefined;
      return { ...(await absent(entry.key)), id: entry.id };
    },
    close,
  };
}
