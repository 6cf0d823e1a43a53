export {
  type BullmqDurableQueue,
  type BullmqQueueOptions,
  bullmqJobId,
  bullmqQueue,
} from './durable/bullmq-queue.js';
export { type BullmqWorkerOptions, createBullmqWorker as createWorker } from './durable/bullmq-worker.js';
export type * from './durable/types.js';
