import type { JobEngine } from '../port.js';

/**
 * RabbitMQ carries the jobs; the ledger, a table in PostgreSQL, holds what each event is at and the dead
 * letters: what to check when the dead letters cannot be read is PostgreSQL.
 */
export const rabbitmqEngine: JobEngine = {
  name: 'rabbitmq',
  store: 'PostgreSQL',
  failureReason(message) {
    if (/delivered \d+ times without an answer/.test(message)) return 'job_stalled';
    if (/timed out|timeout/i.test(message)) return 'handler_timeout';
    return undefined;
  },
};
