export { type BullmqDeadLettersOptions, bullmqDeadLetters } from './dead-letters.js';
export {
  type BullmqDurableQueue,
  type BullmqQueueOptions,
  bullmqJobId,
  bullmqQueue,
} from './queue.js';
export { type BullmqWorkerOptions, createBullmqWorker } from './worker.js';
