/**
 * The members of a PgBoss instance the queue and its workers use, declared here so the package's public
 * types never load pg-boss's own declarations: those of pg-boss 12.38 do not compile with skipLibCheck off
 * (manager.d.ts names a ResolvedConstructorOptions its types.d.ts does not export). A PgBoss instance is one.
 */
export interface PgBossInstance {
  start(): Promise<unknown>;
  stop(options?: { graceful?: boolean; close?: boolean; timeout?: number }): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  send(name: string, data: object, options: { id: string }): Promise<string | null>;
  getJobById(name: string, id: string): Promise<{ state: PgBossJobState } | null>;
  createQueue(name: string, options: PgBossQueuePolicy): Promise<void>;
  updateQueue(name: string, options: PgBossQueuePolicy): Promise<void>;
  getQueue(name: string): Promise<{ table: string; expireInSeconds?: number; deadLetter?: string } | null>;
  getDb(): { executeSql(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };
  work<T>(
    name: string,
    options: PgBossWorkOptions,
    handler: (jobs: PgBossJob<T>[]) => Promise<PgBossJobResult[]>,
  ): Promise<string>;
  offWork(name: string, options?: { id?: string; wait?: boolean }): Promise<void>;
  /** Settles one fetched job (pg-boss checks the attempt it was fetched for). */
  complete(name: string, job: PgBossJob<unknown>, data?: object | null): Promise<unknown>;
  fail(name: string, job: PgBossJob<unknown>, data?: object | null): Promise<unknown>;
}

export type PgBossJobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

/** The queue settings pgBossQueue sets (pg-boss's Queue options, the ones used). */
export interface PgBossQueuePolicy {
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  deleteAfterSeconds?: number;
  retentionSeconds?: number;
  heartbeatSeconds?: number;
  deadLetter?: string;
}

export interface PgBossWorkOptions {
  batchSize: number;
  perJobResults: true;
  burstWhenBatchFull: boolean;
  includeMetadata: true;
  pollingIntervalSeconds: number;
}

/** A fetched job with its metadata (includeMetadata), as a worker reads it. */
export interface PgBossJob<T> {
  id: string;
  data: T;
  retryCount: number;
  retryLimit: number;
  /** What the last failed attempt stored (pg-boss keeps it until the retry runs). */
  output?: unknown;
}

export interface PgBossJobResult {
  id: string;
  status: 'completed' | 'failed' | 'deadletter';
  output?: unknown;
}
