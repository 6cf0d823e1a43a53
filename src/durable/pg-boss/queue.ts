import { createHash } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { boundsItsOwnEnqueue, withDeadline } from '../../base/deadline.js';
import { WebhookConfigError } from '../../base/errors.js';
import { option, rules } from '../../base/options.js';
import { DEFAULT_RETENTION_MS } from '../../stores/retention.js';
import { COUNTS_INTERVAL_MS, countsPoller } from '../counts-poller.js';
import { retrySchedule } from '../job-run.js';
import type { DurableJob, DurableQueue, DurableQueueOptions } from '../port.js';
import { storedJob } from './job-data.js';
import type { PgBossInstance } from './types.js';

export interface PgBossQueueOptions extends DurableQueueOptions {
  /**
   * A PgBoss instance you created, started or not (the queue starts it on first use; stopping it stays
   * yours); or pass `connectionString`.
   */
  boss?: PgBossInstance;
  /** Where PostgreSQL is; the queue then runs its own PgBoss (and stops it on close()). */
  connectionString?: string;
  /** pg-boss's schema. Default `pgboss` (a `boss` you pass: its schema, if not the default). */
  schema?: string;
  /** The dead-letter queue's name. Default `<name>_dead_letter`. */
  deadLetter?: string;
  /**
   * A running job's heartbeat interval, whole seconds ≥ 10: a job whose worker sent no heartbeat for this
   * long is failed on the next supervise pass and retried (it counts as an attempt). Default 30.
   */
  heartbeatSeconds?: number;
  /**
   * How often the queue's own PgBoss runs its supervise pass (pg-boss's superviseIntervalSeconds and
   * monitorIntervalSeconds), seconds ≥ 1: the pass that finds jobs whose heartbeat lapsed, so a dead
   * worker's job runs again within heartbeatSeconds + this + the first retry's backoff. Each pass also
   * counts the queue's jobs. Default 10. With a `boss` of your own, set both intervals on it instead.
   */
  superviseIntervalSeconds?: number;
}

/** A DurableQueue on pg-boss, with what createPgBossWorker needs to consume it. */
export interface PgBossDurableQueue extends DurableQueue {
  readonly engine: 'pg-boss';
  readonly boss: PgBossInstance;
  readonly name: string;
  /** pg-boss's schema, where a worker looks for jobs pg-boss itself sent to the dead-letter. */
  readonly schema: string;
  /** How often pg-boss looks for jobs whose heartbeat lapsed or that expired (its supervise pass). */
  readonly superviseIntervalMs: number;
  /** Starts PgBoss (if the queue owns it) and creates the queue and its dead-letter queue; idempotent. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_QUEUE_NAME = 'messaging_webhooks';

interface QueuePolicy {
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  deleteAfterSeconds: number;
  heartbeatSeconds: number;
  deadLetter: string;
}

/**
 * Starts the boss and creates the queue and its dead-letter queue once, shared by concurrent callers; a failed
 * start is tried again by the next call. `table` is the queue's own table, known once started.
 */
function queueStarter(boss: PgBossInstance, schema: string, name: string, policy: QueuePolicy) {
  let started: Promise<void> | undefined;
  let table: string | undefined;
  const ready = () => {
    started ??= (async () => {
      // Also a boss you passed unstarted: start() is idempotent, and a boss never started would answer every
      // delivery 503 for ever.
      await boss.start();
      // A dead letter stays until it is replayed or purged: the copies wait (`created`) in a queue no worker
      // takes from, which pg-boss's sweep deletes once their retention ends, so that retention is as long as
      // pg-boss can hold, and copies an earlier policy gave less are given it too.
      await boss.createQueue(policy.deadLetter, DEAD_LETTER_POLICY);
      await boss.updateQueue(policy.deadLetter, DEAD_LETTER_POLICY);
      await keepDeadLetters(boss, schema, policy.deadLetter);
      // createQueue leaves an existing queue as it is: updateQueue brings its policy to these options.
      await boss.createQueue(name, policy);
      await boss.updateQueue(name, policy);
      table = (await boss.getQueue(name))?.table;
    })();
    started.catch(() => {
      started = undefined;
    });
    return started;
  };
  return { ready, table: () => table };
}
/** pg-boss keeps a job for an int4 of seconds at most: 68 years. Completed copies are never deleted (0). */
const DEAD_LETTER_POLICY = { deleteAfterSeconds: 0, retentionSeconds: 2_147_483_647 };

/** Gives the dead-letter copies made under a shorter retention the dead-letter queue's own. */
async function keepDeadLetters(boss: PgBossInstance, schema: string, deadLetter: string): Promise<void> {
  const queue = await boss.getQueue(deadLetter);
  if (!queue) return;
  await boss.getDb().executeSql(
    `UPDATE "${schema}"."${queue.table}"
        SET keep_until = start_after + $2 * interval '1s'
      WHERE name = $1 AND state < 'active' AND keep_until < start_after + $2 * interval '1s'`,
    [deadLetter, DEAD_LETTER_POLICY.retentionSeconds],
  );
}

const DEFAULT_HEARTBEAT_SECONDS = 30;
// pg-boss's own 60 s left a dead worker's job waiting up to 90 s; a pass every 10 s costs one count query.
const DEFAULT_SUPERVISE_SECONDS = 10;

/**
 * Durable acknowledgement on pg-boss: each event becomes one job whose id is derived from its dedupe key
 * (a UUID from its SHA-256), so every further delivery finds it; 202 is answered once the INSERT committed.
 * Completed jobs are kept for `retentionMs` (the dedupe window); a job that failed every attempt is copied
 * to the dead-letter queue and stays `failed` in its own.
 */
export function pgBossQueue(options: PgBossQueueOptions): PgBossDurableQueue {
  if (!options?.boss && !options?.connectionString) {
    throw new WebhookConfigError(
      'pgBossQueue needs `connectionString` (where PostgreSQL is) or a PgBoss `boss`.',
    );
  }
  const { attempts, backoffMs } = retrySchedule(options);
  const { heartbeatSeconds, superviseIntervalSeconds } = recoverySettings(options);
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const deadLetter = options.deadLetter ?? `${name}_dead_letter`;
  const schema = options.schema ?? 'pgboss';
  const owned = !options.boss;
  const boss: PgBossInstance =
    options.boss ??
    new PgBoss({
      connectionString: options.connectionString as string,
      schema,
      max: 10,
      superviseIntervalSeconds,
      monitorIntervalSeconds: superviseIntervalSeconds,
    });
  if (owned) boss.on('error', () => {}); // pg-boss reconnects; a failed enqueue is answered 503 and reported.
  const retentionSeconds = Math.ceil((options.retentionMs ?? DEFAULT_RETENTION_MS) / 1000);
  const policy = {
    retryLimit: attempts - 1,
    retryDelay: Math.max(1, Math.round(backoffMs / 1000)),
    retryBackoff: true,
    deleteAfterSeconds: retentionSeconds,
    heartbeatSeconds,
    deadLetter,
  };
  const { ready, table } = queueStarter(boss, schema, name, policy);

  const poller = countsPoller(async () => {
    await ready();
    return readCounts(boss, schema, table(), name);
  }, options.countsIntervalMs ?? COUNTS_INTERVAL_MS);

  async function enqueue(job: DurableJob): Promise<'enqueued' | 'in_progress' | 'duplicate'> {
    await ready();
    const id = pgBossJobId(job.key);
    // An INSERT … ON CONFLICT DO NOTHING in its own transaction: an id means it committed, null that the
    // job exists, and its state says what the delivery gets.
    if (await boss.send(name, storedJob(job), { id })) return 'enqueued';
    const existing = await boss.getJobById(name, id);
    if (!existing) throw new Error(`pg-boss neither created nor found job ${id}; retry the delivery.`);
    return existing.state === 'created' || existing.state === 'retry' || existing.state === 'active'
      ? 'in_progress'
      : 'duplicate';
  }

  return boundsItsOwnEnqueue({
    engine: 'pg-boss',
    boss,
    name,
    schema,
    superviseIntervalMs: superviseIntervalSeconds * 1000,
    ready,
    enqueue: (job, deadlineMs) => withDeadline(enqueue(job), deadlineMs, 'Sending the pg-boss job'),
    counts: poller.counts,
    async close() {
      poller.stop();
      if (owned) await boss.stop({ graceful: true });
    },
  });
}

/** The queue's jobs by state, in one query. */
async function readCounts(boss: PgBossInstance, schema: string, table: string | undefined, name: string) {
  const { rows } = await boss
    .getDb()
    .executeSql(
      `SELECT state, count(*)::int AS n FROM "${schema}"."${table}" WHERE name = $1 AND state IN ('created', 'retry', 'active', 'failed') GROUP BY state`,
      [name],
    );
  const count = (state: string) => (rows.find((row) => row.state === state)?.n as number | undefined) ?? 0;
  return {
    waiting: count('created') + count('retry'),
    running: count('active'),
    retrying: count('retry'),
    deadLettered: count('failed'),
  };
}

/** What governs how soon a dead worker's job runs again, checked when the queue is created. */
function recoverySettings(options: PgBossQueueOptions) {
  const heartbeatSeconds = option(
    'heartbeatSeconds',
    options.heartbeatSeconds,
    DEFAULT_HEARTBEAT_SECONDS,
    rules.whole({ min: 10, unit: 'seconds', why: "pg-boss's floor" }),
  );
  if (options.boss && options.superviseIntervalSeconds !== undefined) {
    throw new WebhookConfigError(
      'superviseIntervalSeconds applies to the PgBoss the queue runs itself; with your own `boss`, set superviseIntervalSeconds and monitorIntervalSeconds on it (new PgBoss({ …, superviseIntervalSeconds: 10, monitorIntervalSeconds: 10 })).',
    );
  }
  const superviseIntervalSeconds = option(
    'superviseIntervalSeconds',
    options.superviseIntervalSeconds,
    DEFAULT_SUPERVISE_SECONDS,
    rules.number({ min: 1, max: 3600, unit: 'seconds' }),
  );
  return { heartbeatSeconds, superviseIntervalSeconds };
}

/** pg-boss ids are UUIDs: the dedupe key's SHA-256, cut to 128 bits in the UUID layout. */
export function pgBossJobId(key: string): string {
  // A lone surrogate has no UTF-8: hashed as it is, two such keys would be one id. Their JSON string tells them apart.
  const hex = createHash('sha256')
    .update(/\p{Cs}/u.test(key) ? JSON.stringify(key) : key)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
