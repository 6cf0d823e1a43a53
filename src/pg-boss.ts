export {
  type PgBossDurableQueue,
  type PgBossQueueOptions,
  pgBossJobId,
  pgBossQueue,
} from './durable/pg-boss-queue.js';
export type { PgBossInstance } from './durable/pg-boss-types.js';
export { createPgBossWorker as createWorker, type PgBossWorkerOptions } from './durable/pg-boss-worker.js';
export type * from './durable/types.js';
