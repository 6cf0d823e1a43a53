export type { NatsConnectionOptions } from './connection.js';
export { type NatsDeadLettersOptions, natsDeadLetters } from './dead-letters.js';
export { type NatsDurableQueue, type NatsQueueOptions, natsQueue } from './queue.js';
export { createNatsWorker, type NatsWorkerOptions } from './worker.js';
