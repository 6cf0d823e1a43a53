import { describe, expect, it } from 'vitest';
import type { Answer } from '../../src/base/deadline.js';
import { Executor, type Job } from '../../src/base/executor.js';

/** A job whose run is held until the test answers it, and which records what happened to it. */
function heldJob(): Job<string> & {
  started: boolean;
  abandoned: boolean;
  answer: Answer<string> | undefined;
} {
  return {
    started: false,
    abandoned: false,
    answer: undefined,
    run(to) {
      this.started = true;
      this.answer = to;
    },
    abandon() {
      this.abandoned = true;
      return Promise.resolve();
    },
  };
}

const started = (executor: Executor, job: Job<string>) => {
  expect(executor.reserve()).toBe(true);
  return executor.submit(job, 'cut off');
};

/** One running slot and two jobs submitted to it: the first runs, the second waits for it. */
function oneRunningOneQueued() {
  const executor = new Executor({ concurrency: 1, maxQueue: 1 });
  const running = heldJob();
  const queued = heldJob();
  return {
    executor,
    running,
    queued,
    runningAnswer: started(executor, running),
    queuedAnswer: started(executor, queued),
  };
}

describe('Executor', () => {
  it('answers a request with its job’s answer, and starts the next job once it is given', async () => {
    const { running, queued, runningAnswer, queuedAnswer } = oneRunningOneQueued();
    await expect.poll(() => running.started).toBe(true);
    expect(queued.started).toBe(false);
    running.answer?.settle('first done');
    await expect(runningAnswer).resolves.toBe('first done');
    await expect.poll(() => queued.started).toBe(true);
    queued.answer?.settle('second done');
    await expect(queuedAnswer).resolves.toBe('second done');
  });

  it('passes a job that throws on to its request, and frees the slot for the next', async () => {
    const executor = new Executor({ concurrency: 1, maxQueue: 1 });
    const bug = new Error('a bug in the job');
    const throwing: Job<string> = {
      run() {
        throw bug;
      },
      abandon: () => Promise.resolve(),
    };
    const next = heldJob();
    const failed = started(executor, throwing);
    const nextAnswer = started(executor, next);
    await expect(failed).rejects.toBe(bug);
    await expect.poll(() => next.started).toBe(true);
    next.answer?.settle('ran after the bug');
    await expect(nextAnswer).resolves.toBe('ran after the bug');
  });

  it('takes a job’s first answer only', async () => {
    const executor = new Executor({ concurrency: 1, maxQueue: 0 });
    const job = heldJob();
    const answer = started(executor, job);
    await expect.poll(() => job.started).toBe(true);
    job.answer?.settle('first');
    job.answer?.fail(new Error('a second answer'));
    job.answer?.settle('third');
    await expect(answer).resolves.toBe('first');
    await executor.drain(undefined);
  });

  it('once drain gives up: a running job is abandoned and answered its cut-off, a queued one never starts', async () => {
    const { executor, running, queued, runningAnswer, queuedAnswer } = oneRunningOneQueued();
    await expect.poll(() => running.started).toBe(true);
    await executor.drain(0);
    await expect(runningAnswer).resolves.toBe('cut off');
    await expect(queuedAnswer).resolves.toBe('cut off');
    expect([running.abandoned, queued.started, queued.abandoned]).toEqual([true, false, true]);
    // The running job's late answer changes nothing.
    running.answer?.settle('too late');
    await expect(runningAnswer).resolves.toBe('cut off');
    expect(executor.reserve()).toBe(false);
  });
});
