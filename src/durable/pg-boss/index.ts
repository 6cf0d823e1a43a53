export { type PgBossDeadLettersOptions, pgBossDeadLetters } from './dead-letters.js';
export {
  type PgBossDurableQueue,
  type PgBossQueueOptions,
  pgBossJobId,
  pgBossQueue,
} from './queue.js';
export type {
  PgBossInstance,
  PgBossJob,
  PgBossJobResult,
  PgBossJobState,
  PgBossQueuePolicy,
  PgBossWorkOptions,
} from './types.js';
export { createPgBossWorker, type PgBossWorkerOptions } from './worker.js';
