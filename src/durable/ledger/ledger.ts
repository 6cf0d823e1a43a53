import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { callUser } from '../../base/deadline.js';
import { kindOf, WebhookConfigError } from '../../base/errors.js';
import { statementName } from '../../stores/sql-inbox-sql.js';
import type { DurableJob, DurableQueueCounts, EnqueueResult } from '../port.js';
import { type LedgerStatements, ledgerStatements, TABLE_NAME } from './sql.js';

/** Where a broker queue keeps its ledger: a table in your PostgreSQL. */
export interface LedgerOptions {
  /** A pg Pool of yours (`new pg.Pool(…)`, never closed by the queue); or pass `connectionString`. */
  pool?: LedgerPool;
  /** Where PostgreSQL is; the queue then opens a pool of its own (and closes it on close()). */
  connectionString?: string;
  /** The ledger's table, created on first use. Default `messaging_webhooks_jobs`. */
  table?: string;
}

/**
 * What the ledger uses of a pg Pool. The handoff's statement goes as a named (prepared) statement, a pg query
 * config `{ name, text }` with its values as the second argument: PostgreSQL plans it once per connection
 * instead of on every handoff.
 */
export interface LedgerPool {
  query(
    text: string | NamedStatement,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  connect(): Promise<{ query(text: string, values?: unknown[]): Promise<unknown>; release(): void }>;
  end(): Promise<void>;
}

/**
 * A named (prepared) statement as a pg query config. Its `name` and `text` may be inherited (the ledger passes an
 * object whose prototype holds them): a pool wrapper reads them, it does not spread the object.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

export const DEFAULT_LEDGER_TABLE = 'messaging_webhooks_jobs';
/**
 * A delivery that finds its event queued this long publishes it again: the receiver that wrote the row may
 * have died before the broker confirmed its message. A second copy is harmless (a worker runs the event only
 * under its claim here, and drops the copy of an event completed or dead); a lost one is not.
 */
export const REPUBLISH_AFTER_MS = 10_000;

/** One dead letter as the ledger holds it. */
export interface LedgerDeadRow {
  key: string;
  job: DurableJob;
  attempt: number;
  enqueuedAt: Date;
  failedAt: Date;
  errorCode: string | null;
  errorMessage: string;
}

export type LedgerState = 'queued' | 'retrying' | 'running' | 'completed' | 'dead';

/**
 * The outcome of a worker's claim: run this attempt, drop a copy of an event settled, or try again later;
 * `missing` when the event has no row (not yet committed by its handoff, or gone).
 */
export type LedgerClaim =
  | { run: true; attempt: number; token: string }
  | { run: false; later: boolean; missing: boolean };

/** The ledger of one queue: what each event's handoff and runs are at, and its dead letters. */
export interface Ledger {
  readonly queue: string;
  ready(): Promise<void>;
  /** `enqueued` when the caller must publish the job now; `text` is the job as JSON. */
  admit(key: string, text: string): Promise<EnqueueResult>;
  withdraw(key: string): Promise<void>;
  claim(key: string, leaseMs: number): Promise<LedgerClaim>;
  complete(key: string, token: string, retentionMs: number): Promise<void>;
  retry(key: string, token: string, delayMs: number, code: string, message: string): Promise<void>;
  bury(key: string, token: string | null, code: string, message: string): Promise<void>;
  counts(): Promise<Omit<DurableQueueCounts, 'readAt'>>;
  sweep(): Promise<void>;
  listDead(limit: number, offset: number, oldestFirst: boolean): Promise<LedgerDeadRow[]>;
  countDead(): Promise<number>;
  findDead(keys: string[]): Promise<LedgerDeadRow[]>;
  statesOf(keys: string[]): Promise<Map<string, LedgerState>>;
  reopen(key: string): Promise<DurableJob | undefined>;
  restore(key: string): Promise<void>;
  purge(key: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The key as stored: JSON text, so a NUL or a lone surrogate of an event id survives PostgreSQL's text. */
const stored = (key: string) => JSON.stringify(key);

/** The ledger of `queue` in the table of `options`; `who` names the function for configuration errors. */
export function openLedger(options: LedgerOptions, queue: string, who: string): Ledger {
  const table = options.table ?? DEFAULT_LEDGER_TABLE;
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new WebhookConfigError(
      `${who}: table must be a PostgreSQL name (letters, digits, _; optionally schema.table), got ${kindOf(table)}.`,
    );
  }
  const { opening, owned } = poolOf(options, who);
  let pool: LedgerPool | undefined;
  const sql = ledgerStatements(table);
  let created: Promise<void> | undefined;
  // Set once the table exists: a statement then goes to the pool without waiting on `created` first.
  let opened: LedgerPool | undefined;
  const ready = () => {
    created ??= (async () => {
      pool = await opening;
      await createTable(pool, sql, table);
      opened = pool;
    })();
    created.catch(() => {
      created = undefined; // unreachable or refused: the next use tries again
    });
    return created;
  };
  // A named statement goes as an object of its own whose name and text are its prototype's: pg copies a
  // config's own properties (every field descriptor) before each query, and this one has none; the values go
  // as the second argument. Its own object, not the shared one: older pg versions write to the config.
  const send = (to: LedgerPool, text: string | NamedStatement, values: unknown[]) =>
    to.query(typeof text === 'string' ? text : (Object.create(text) as NamedStatement), values);
  const query: Query = (text, values) =>
    opened
      ? Promise.resolve(callUser(() => send(opened as LedgerPool, text, values)))
      : ready().then(() => send(pool as LedgerPool, text, values));
  return {
    queue,
    ready,
    ...eventRows(query, sql, queue),
    async counts() {
      const rows = (await query(sql.counts, [queue])).rows as unknown as { state: LedgerState; n: number }[];
      const count = (state: LedgerState) => rows.find((row) => row.state === state)?.n ?? 0;
      return {
        waiting: count('queued') + count('retrying'),
        running: count('running'),
        retrying: count('retrying'),
        deadLettered: count('dead'),
      };
    },
    async sweep() {
      await query(sql.sweep, [queue]);
    },
    ...deadLetterRows(query, sql, queue),
    async close() {
      if (owned) await (await opening.catch(() => undefined))?.end();
    },
  };
}

/** A statement of the ledger, as text or as a named (prepared) statement. */
type Query = (
  text: string | NamedStatement,
  values: unknown[],
) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;

/** The ledger's changes of one event's row: its handoff, and its runs in the workers. */
function eventRows(
  query: Query,
  sql: LedgerStatements,
  queue: string,
): Pick<Ledger, 'admit' | 'withdraw' | 'claim' | 'complete' | 'retry' | 'bury'> {
  const stateOf = async (key: string) =>
    (await query(sql.stateOf, [queue, key])).rows[0]?.state as LedgerState | undefined;
  // Named per table: a connection keeps the statement under its name, and another table's differs.
  const admitStatement: NamedStatement = {
    name: statementName(sql.admit, 'mw_admit'),
    text: sql.admit,
  };
  return {
    async admit(jobKey, text) {
      const key = stored(jobKey);
      const written = () => query(admitStatement, [queue, key, text]);
      if ((await written()).rowCount) return 'enqueued';
      if ((await query(sql.readmit, [queue, key, text, REPUBLISH_AFTER_MS])).rowCount) return 'enqueued';
      const state = await stateOf(key);
      // Gone between the reads (swept or purged): written now, or by the next delivery.
      if (state === undefined) return (await written()).rowCount ? 'enqueued' : 'in_progress';
      return state === 'completed' || state === 'dead' ? 'duplicate' : 'in_progress';
    },
    async withdraw(key) {
      await query(sql.withdraw, [queue, stored(key)]);
    },
    async claim(key, leaseMs) {
      const token = randomUUID();
      const claimed = await query(sql.claim, [queue, stored(key), token, leaseMs]);
      const row = claimed.rows[0] as { attempt: number } | undefined;
      if (row) return { run: true, attempt: row.attempt, token };
      const state = await stateOf(stored(key));
      // Running elsewhere, or waiting out a backoff: this copy comes back later. Settled: dropped.
      const later = state === 'running' || state === 'retrying' || state === 'queued';
      return { run: false, later, missing: state === undefined };
    },
    async complete(key, token, retentionMs) {
      await query(sql.complete, [queue, stored(key), token, retentionMs]);
    },
    async retry(key, token, delayMs, code, message) {
      await query(sql.retry, [queue, stored(key), token, delayMs, code, JSON.stringify(message)]);
    },
    async bury(key, token, code, message) {
      await query(sql.bury, [queue, stored(key), token, code, JSON.stringify(message)]);
    },
  };
}

/** The ledger's reads and changes of dead letters. */
function deadLetterRows(
  query: Query,
  sql: LedgerStatements,
  queue: string,
): Pick<Ledger, 'listDead' | 'countDead' | 'findDead' | 'statesOf' | 'reopen' | 'restore' | 'purge'> {
  return {
    async listDead(limit, offset, oldestFirst) {
      return (await query(sql.listDead(oldestFirst), [queue, limit, offset])).rows.map(deadRow);
    },
    async countDead() {
      return ((await query(sql.countDead, [queue])).rows[0]?.n as number | undefined) ?? 0;
    },
    async findDead(keys) {
      return (await query(sql.findDead, [queue, keys.map(stored)])).rows.map(deadRow);
    },
    async statesOf(keys) {
      const rows = (await query(sql.statesOf, [queue, keys.map(stored)])).rows;
      return new Map(rows.map((row) => [JSON.parse(row.key as string) as string, row.state as LedgerState]));
    },
    async reopen(key) {
      const row = (await query(sql.reopen, [queue, stored(key)])).rows[0];
      return row ? (JSON.parse(row.job as string) as DurableJob) : undefined;
    },
    async restore(key) {
      await query(sql.restore, [queue, stored(key)]);
    },
    async purge(key) {
      return ((await query(sql.purge, [queue, stored(key)])).rowCount ?? 0) > 0;
    },
  };
}

function deadRow(row: Record<string, unknown>): LedgerDeadRow {
  return {
    key: JSON.parse(row.key as string) as string,
    job: JSON.parse(row.job as string) as DurableJob,
    attempt: row.attempt as number,
    enqueuedAt: row.enqueued_at as Date,
    failedAt: row.changed_at as Date,
    errorCode: row.error_code as string | null,
    errorMessage: row.error_message ? (JSON.parse(row.error_message as string) as string) : '',
  };
}

/** The pool given, or one opened here: `pg` is loaded only then (an optional peer). */
function poolOf(options: LedgerOptions, who: string): { opening: Promise<LedgerPool>; owned: boolean } {
  if (options.pool) {
    if (typeof options.pool.query !== 'function' || typeof options.pool.connect !== 'function') {
      throw new WebhookConfigError(`${who}: pool must be a pg Pool, got ${kindOf(options.pool)}.`);
    }
    return { opening: Promise.resolve(options.pool), owned: false };
  }
  if (typeof options.connectionString !== 'string' || options.connectionString === '') {
    throw new WebhookConfigError(
      `${who} needs its ledger's PostgreSQL: \`pool\` (a pg Pool) or \`connectionString\`. The broker carries the jobs; the ledger remembers which events ran, for the dedupe and the dead letters.`,
    );
  }
  const connectionString = options.connectionString;
  const opening = import('pg').then(({ default: pg }) => {
    const pool: Pool = new pg.Pool({ connectionString, max: 10 });
    // A lost idle connection: the pool opens another; the call that meets the outage reports it.
    pool.on('error', () => {});
    return pool as unknown as LedgerPool;
  });
  opening.catch(() => {}); // told by the first call
  return { opening, owned: true };
}

/** Creates the table once per process; concurrent creators across processes are serialised by a lock. */
async function createTable(pool: LedgerPool, sql: LedgerStatements, table: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`messaging-webhooks:${table}`]);
    for (const statement of sql.create) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
