import { expect, it } from 'vitest';
import { startPoller } from '../../src/base/poller.js';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';

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
  // Another poller on the same interval counts the ticks that went by meanwhile.
  let ticks = 0;
  const clock = startPoller(() => ticks++, 1);
  try {
    await until(() => ticks >= 20);
    expect(polls).toBe(1);
    held.open();
    await until(() => polls >= 2);
  } finally {
    slow.stop();
    clock.stop();
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
    await until(() => polls >= 3);
  } finally {
    poller.stop();
  }
});
