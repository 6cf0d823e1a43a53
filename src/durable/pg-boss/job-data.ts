import type { DurableJob } from '../port.js';

/**
 * What jsonb refuses in JSON text: the escape of a NUL, and of a UTF-16 surrogate (JSON.stringify escapes only
 * those without their pair). A backslash that happens to precede such letters matches too, which costs only
 * the encoding below, never a wrong job.
 */
const JSONB_REFUSES = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;

/** The job's data when jsonb cannot hold it as it is: its JSON text, base64, returned to the worker as it was. */
interface EncodedJob {
  jobJsonBase64: string;
}

/**
 * The data pg-boss stores for a job: the job itself, or, when a string of the event holds what jsonb refuses
 * (a sender's NUL, a lone surrogate), the job's JSON text in base64, so that the event is taken and its
 * handlers get it exactly as it came.
 */
export function storedJob(job: DurableJob): object {
  const json = JSON.stringify(job);
  return JSONB_REFUSES.test(json) ? { jobJsonBase64: Buffer.from(json, 'utf8').toString('base64') } : job;
}

/** The job as the receiver handed it over, from the data pg-boss stored. */
export function jobOf(data: unknown): DurableJob {
  const encoded = (data as Partial<EncodedJob> | null)?.jobJsonBase64;
  if (typeof encoded !== 'string') return data as DurableJob;
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as DurableJob;
}
