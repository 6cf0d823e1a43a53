export type { RabbitmqConnectionOptions } from './broker.js';
export { type RabbitmqDeadLettersOptions, rabbitmqDeadLetters } from './dead-letters.js';
export { type RabbitmqDurableQueue, type RabbitmqQueueOptions, rabbitmqQueue } from './queue.js';
export { createRabbitmqWorker, type RabbitmqWorkerOptions } from './worker.js';
