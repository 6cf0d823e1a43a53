import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { DeadLetterError, deadLetters, failureReason } from '../../src/durable/dead-letters.js';
import { deadLetterReason } from '../../src/durable/job-run.js';
import type { JobEngine } from '../../src/durable/port.js';
import { repoRoot } from '../support/entries.js';

// A third engine is one folder: its name and the words of its failures reach the shared parts through JobEngine.
const sqs: JobEngine = {
  name: 'sqs',
  store: 'Amazon SQS',
  failureReason: (message) => (/visibility timeout expired/.test(message) ? 'job_stalled' : undefined),
};

it("a third engine's name and store reach DeadLetters and its messages", async () => {
  const never = new Promise<never>(() => {});
  const letters = deadLetters(
    {
      engine: sqs,
      list: () => never,
      count: () => never,
      find: async () => [],
      absent: async (id) => ({ id, reason: 'not_found', message: 'none' }),
      replay: async () => undefined,
      purge: async () => undefined,
      close: async () => {},
    },
    1,
  );
  expect(letters.engine).toBe('sqs');
  const error = await letters.count().catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(DeadLetterError);
  expect((error as DeadLetterError).message).toContain('no answer from Amazon SQS within 1 ms');
});

it("a third engine's failures are read by its own classifier, after the run's own codes", () => {
  expect(failureReason('visibility timeout expired', sqs)).toBe('job_stalled');
  expect(failureReason('something else', sqs)).toBe('handler_failed');
  expect(failureReason('A handler for message.delivered failed.', sqs)).toBe('handler_failed');
  expect(failureReason('anything', sqs, 'handler_timeout')).toBe('handler_timeout');
  expect(deadLetterReason(new Error('visibility timeout expired'), sqs)).toBe('job_stalled');
  // BullMQ's words mean nothing to another engine.
  expect(deadLetterReason(new Error('Missing lock for job 1'), sqs)).toBe('handler_failed');
});

it('no shared file of src/durable/ names an engine: each lives in its own folder', () => {
  const durable = path.join(repoRoot, 'src/durable');
  const shared = fs.readdirSync(durable).filter((name) => name.endsWith('.ts'));
  expect(shared.length).toBeGreaterThan(0);
  for (const name of shared) {
    const text = fs.readFileSync(path.join(durable, name), 'utf8');
    expect(text, name).not.toMatch(/'(bullmq|pg-boss)'/);
    expect(text, name).not.toMatch(/missing lock|heartbeat|stalled\|/i);
  }
});
