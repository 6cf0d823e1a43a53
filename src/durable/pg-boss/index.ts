export type * from '../port.js';
export {
  type PgBossDurableQueue,
  type PgBossQueueOptions,
  pgBossJobId,
  pgBossQueue,
} from './queue.js';
export type { PgBossInstance } from './types.js';
export { createPgBossWorker as createWorker, type PgBossWorkerOptions } from './worker.js';
