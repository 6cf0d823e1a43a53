import type { JobEngine } from '../port.js';

/** BullMQ, on Redis: a job that stalled too often, or whose lock another worker took. */
export const bullmqEngine: JobEngine = {
  name: 'bullmq',
  store: 'Redis',
  failureReason(message) {
    if (/stalled|heartbeat/i.test(message)) return 'job_stalled';
    if (/missing lock|lock mismatch/i.test(message)) return 'lock_lost';
    if (/timed out|timeout/i.test(message)) return 'handler_timeout';
    return undefined;
  },
};
