export type * from '../port.js';
export {
  type BullmqDurableQueue,
  type BullmqQueueOptions,
  bullmqJobId,
  bullmqQueue,
} from './queue.js';
export { type BullmqWorkerOptions, createBullmqWorker as createWorker } from './worker.js';
