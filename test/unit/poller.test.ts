import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { startPoller } from '../../src/base/poller.js';
import { gate } from '../support/gate.js';

// The poller's interval is what is tested: on a fake clock the test decides how many intervals go by.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('a poll still running is not started again; the next one runs once it ended', async () => {
  const held = gate();
  let polls = 0;
  const slow = startPoller(
    async () => {
      polls++;
      if (polls === 1) await held.opened;
    },
    1,
    { immediately: true },
  );
  try {
    // Twenty intervals go by while the first poll is held.
    await vi.advanceTimersByTimeAsync(20);
    expect(polls).toBe(1);
    held.open();
    await vi.advanceTimersByTimeAsync(1);
    expect(polls).toBe(2);
  } finally {
    slow.stop();
  }
});

it('a poll that throws or rejects does not stop the ones after it', async () => {
  let polls = 0;
  const poller = startPoller(() => {
    polls++;
    if (polls === 1) throw new Error('unreachable');
    if (polls === 2) return Promise.reject(new Error('unreachable'));
  }, 1);
  try {
    await vi.advanceTimersByTimeAsync(3);
    expect(polls).toBe(3);
  } finally {
    poller.stop();
  }
});
