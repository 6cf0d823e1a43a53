import { PgBoss } from 'pg-boss';
import { WebhookConfigError } from '../../base/errors.js';
import {
  candidateKeys,
  type DeadLetter,
  type DeadLetterEngine,
  DeadLetterError,
  type DeadLetters,
  deadLetterId,
  deadLetters,
  failureReason,
  type SkippedDeadLetter,
  skipped,
} from '../dead-letters.js';
import * as sql from './dead-letter-sql.js';
import { pgBossEngine } from './engine.js';
import { jobOf } from './job-data.js';
import { DEFAULT_QUEUE_NAME, type PgBossDurableQueue, pgBossJobId } from './queue.js';
import type { PgBossInstance } from './types.js';

/** Where the dead letters are: the queue itself, or where to find it. */
export interface PgBossDeadLettersOptions {
  /** The queue the receiver and its workers use (pgBossQueue(…)); or pass `connectionString` or `boss`. */
  queue?: PgBossDurableQueue;
  /** Where PostgreSQL is: a PgBoss of its own is started (no maintenance, no migration) and stopped on close(). */
  connectionString?: string;
  /** A PgBoss you created, started or not; stopping it stays yours. */
  boss?: PgBossInstance;
  /** The queue's name. Default `messaging_webhooks`, pgBossQueue's. */
  name?: string;
  /** pg-boss's schema. Default `pgboss`. */
  schema?: string;
  /** How long each call to PostgreSQL may take (ms). Default 10000. */
  deadlineMs?: number;
}

const LIVE = new Set(['created', 'retry', 'active']);

/**
 * The dead letters of a pg-boss queue: the copies in its dead-letter queue. A replay puts the failed job
 * itself back to `created` with a fresh attempt count, under its own id (so it can never run beside a live
 * copy of the event), and deletes the copy, in one statement.
 *
 *   const dead = pgBossDeadLetters({ queue });   // the queue of the receiver and its workers
 *   await dead.replay(['evt_123']);
 */
export function pgBossDeadLetters(options: PgBossDeadLettersOptions): DeadLetters {
  const { boss, name, schema, start, stop } = connect(options);
  let found: Promise<sql.Tables & { deadLetter: string }> | undefined;
  const tables = () => {
    found ??= resolveTables(boss, name, schema, start);
    found.catch(() => {
      found = undefined; // the next call tries again (PostgreSQL may be back, the queue created)
    });
    return found;
  };
  const run = async (statement: (t: sql.Tables) => string, values: (deadLetter: string) => unknown[]) => {
    const t = await tables();
    return (await boss.getDb().executeSql(statement(t), values(t.deadLetter))).rows;
  };
  const idsOf = (id: string) => candidateKeys(id).map(pgBossJobId);

  async function absent(id: string): Promise<SkippedDeadLetter> {
    const rows = await run(sql.stateSql, () => [name, idsOf(id)]);
    return skipOf(
      id,
      rows.map((row) => row.state as string),
    );
  }

  /** The event's job left its queue (pg-boss deleted it after its retention): a new one under the same id. */
  async function resend(entry: DeadLetter, data: object): Promise<SkippedDeadLetter | undefined> {
    if (!(await boss.send(name, data, { id: entry.jobId }))) return skipped.live(entry.id);
    await run(sql.dropCopiesSql, (deadLetter) => [deadLetter, name, entry.jobId]);
    return undefined;
  }

  const engine: DeadLetterEngine = {
    engine: pgBossEngine,
    list: async (limit, offset, oldestFirst = false) =>
      (
        await run(oldestFirst ? sql.oldestFirstSql : sql.listSql, (deadLetter) => [
          deadLetter,
          name,
          limit,
          offset,
        ])
      ).map(toDeadLetter),
    count: async () => Number((await run(sql.countSql, (deadLetter) => [deadLetter, name]))[0]?.n ?? 0),
    find: async (id) =>
      (await run(sql.findSql, (deadLetter) => [deadLetter, name, idsOf(id)])).map(toDeadLetter),
    absent,
    async replay(entry) {
      const [row] = await run(sql.replaySql, (deadLetter) => [deadLetter, name, entry.jobId]);
      if (Number(row?.reset) > 0) return undefined;
      if (Number(row?.dead) > 0 && (row?.state ?? null) === null) {
        return resend(entry, row?.data as object);
      }
      return skipOf(entry.id, [row?.state as string]);
    },
    async purge(entry) {
      const [row] = await run(sql.purgeSql, (deadLetter) => [deadLetter, name, entry.jobId]);
      return Number(row?.dead) > 0 ? undefined : skipOf(entry.id, [row?.state as string]);
    },
    close: stop,
  };
  return deadLetters(engine, options.deadlineMs);
}

/** The boss to use, how to start it, and what close() stops: only a boss started here. */
function connect(options: PgBossDeadLettersOptions) {
  if (!options?.queue && !options?.boss && !options?.connectionString) {
    throw new WebhookConfigError(
      'pgBossDeadLetters needs the `queue` your receiver uses (pgBossQueue(…)), a PgBoss `boss`, or `connectionString` (where PostgreSQL is).',
    );
  }
  const { queue } = options;
  const schema = queue?.schema ?? options.schema ?? 'pgboss';
  const name = queue?.name ?? options.name ?? DEFAULT_QUEUE_NAME;
  const owned = !queue && !options.boss;
  const boss: PgBossInstance =
    queue?.boss ??
    options.boss ??
    // Reads and changes jobs only: no supervise or cron timers, and no migration of someone's schema.
    new PgBoss({
      connectionString: options.connectionString as string,
      schema,
      max: 4, // as many as the changes of a page run at once
      supervise: false,
      schedule: false,
      migrate: false,
    });
  if (owned) boss.on('error', () => {}); // each call reports its own failure; pg-boss reconnects
  const start = async () => {
    if (queue) await queue.ready();
    else await boss.start();
  };
  const stop = async () => {
    if (owned) await boss.stop({ graceful: false });
  };
  return { boss, name, schema, start, stop };
}

async function resolveTables(boss: PgBossInstance, name: string, schema: string, start: () => Promise<void>) {
  try {
    await start();
  } catch (error) {
    if (!/not installed/i.test(String((error as Error)?.message))) throw error;
    throw new DeadLetterError(
      'queue_not_found',
      `pg-boss is not installed in schema '${schema}' of this database: pass the database and schema your pgBossQueue uses.`,
      { cause: error },
    );
  }
  const queue = await boss.getQueue(name);
  if (!queue) {
    throw new DeadLetterError(
      'queue_not_found',
      `pg-boss has no queue '${name}' in schema '${schema}': pass the name and schema your pgBossQueue uses.`,
    );
  }
  const deadLetter = queue.deadLetter ?? `${name}_dead_letter`;
  const dead = await boss.getQueue(deadLetter);
  if (!dead) {
    throw new DeadLetterError(
      'queue_not_found',
      `pg-boss has no dead-letter queue '${deadLetter}' for '${name}': start a worker or receiver with pgBossQueue once, which creates it.`,
    );
  }
  const quoted = (table: string) => `"${schema}"."${table}"`;
  const { rows } = await boss
    .getDb()
    .executeSql(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'job' AND column_name = 'source_root_id'`,
      [schema],
    );
  const rooted = rows.length > 0;
  return {
    jobs: quoted(queue.table),
    dead: quoted(dead.table),
    queueTable: quoted('queue'),
    deadLetter,
    rooted,
  };
}

function skipOf(id: string, states: string[]): SkippedDeadLetter {
  if (states.some((state) => LIVE.has(state))) return skipped.live(id);
  if (states.includes('completed')) return skipped.completed(id);
  return skipped.notFound(id);
}

function toDeadLetter(row: Record<string, unknown>): DeadLetter {
  const data = jobOf(row.data);
  const output = (row.source_output ?? {}) as {
    code?: unknown;
    message?: unknown;
    value?: { message?: unknown };
  };
  const message = String(output.message ?? output.value?.message ?? '');
  return {
    id: deadLetterId(data),
    key: data.key,
    jobId: String(row.source_id),
    mode: data.ctx?.mode ?? data.key.split(':')[0] ?? 'live',
    event: data.event,
    error: { reason: failureReason(message, pgBossEngine, output.code), message },
    attempts: Number(row.source_retry_count) + 1,
    enqueuedAt: new Date(row.source_created_on as string),
    failedAt: new Date(row.created_on as string),
  };
}
