import type { JobEngine } from '../port.js';

/** pg-boss, on PostgreSQL: a job it failed itself (its worker stopped its heartbeat, or it expired). */
export const pgBossEngine: JobEngine = {
  name: 'pg-boss',
  store: 'PostgreSQL',
  failureReason(message) {
    if (/^job (heartbeat timeout|timed out)$/.test(message)) return 'job_stalled';
    if (/stalled|heartbeat/i.test(message)) return 'job_stalled';
    if (/timed out|timeout/i.test(message)) return 'handler_timeout';
    return undefined;
  },
};
