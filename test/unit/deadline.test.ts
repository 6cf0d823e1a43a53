import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  TIMED_OUT,
  whenLate,
  withDeadline,
  withinTurnOrDeadline,
  withTimeout,
} from '../../src/base/deadline.js';

describe('withTimeout and withDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('give the work its value or its error when it settles in time, and leave no timer behind', async () => {
    await expect(withTimeout(Promise.resolve('done'), 1000)).resolves.toBe('done');
    await expect(withDeadline(Promise.resolve('done'), 1000, 'The job')).resolves.toBe('done');
    const failure = new Error('refused');
    await expect(withTimeout(Promise.reject(failure), 1000)).rejects.toBe(failure);
    await expect(withDeadline(Promise.reject(failure), 1000, 'The job')).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('end the wait once the time passed: TIMED_OUT, or an error naming what took too long', async () => {
    const never = new Promise<string>(() => {});
    const timed = withTimeout(never, 1000);
    const deadline = withDeadline(never, 3000, 'Adding the BullMQ job');
    const told = expect(deadline).rejects.toThrow('Adding the BullMQ job took longer than 3000 ms.');
    await vi.advanceTimersByTimeAsync(999);
    let settled = false;
    void timed.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(timed).resolves.toBe(TIMED_OUT);
    await vi.advanceTimersByTimeAsync(2000);
    await told;
  });

  it('a late settlement of the work changes nothing once the time ran out', async () => {
    let finish: (value: string) => void = () => {};
    const late = new Promise<string>((resolve) => {
      finish = resolve;
    });
    const timed = withTimeout(late, 10);
    await vi.advanceTimersByTimeAsync(10);
    finish('too late');
    await expect(timed).resolves.toBe(TIMED_OUT);
  });
});

describe('whenLate', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('calls late once the time passed first, and the work settles as late makes it', async () => {
    let reject!: (error: Error) => void;
    const work = new Promise<never>((_, rejectWork) => {
      reject = rejectWork;
    });
    const late = vi.fn(() => reject(new Error('given up')));
    const settled = whenLate(work, 100, late);
    const caught = settled.catch((error: Error) => error.message);
    await vi.advanceTimersByTimeAsync(99);
    expect(late).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(late).toHaveBeenCalledOnce();
    expect(await caught).toBe('given up');
  });

  it('never calls late once the work settled, and leaves no timer behind', async () => {
    const late = vi.fn();
    await expect(whenLate(Promise.resolve('done'), 100, late)).resolves.toBe('done');
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(late).not.toHaveBeenCalled();
  });
});

describe('withinTurnOrDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('arms no timer for work that settles within the turn', async () => {
    const failure = new Error('refused');
    const done = withinTurnOrDeadline(Promise.resolve('done'), 1000, () => new Error('late'));
    const refused = withinTurnOrDeadline(Promise.reject(failure), 1000, () => new Error('late'));
    await expect(done).resolves.toBe('done');
    await expect(refused).rejects.toBe(failure);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fails with the late error once the whole time passed, counted from the call', async () => {
    const timed = withinTurnOrDeadline(new Promise<string>(() => {}), 1000, () => new Error('too slow'));
    const told = timed.catch((error: Error) => error.message);
    let settled = false;
    void told.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await told).toBe('too slow');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('still arms later waits when fake timers were uninstalled before the turn ended', async () => {
    const lost = withinTurnOrDeadline(new Promise<string>(() => {}), 50, () => new Error('lost'));
    void lost.catch(() => {});
    vi.useRealTimers();
    const realNow = Date.now.bind(Date);
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 200);
    try {
      const later = withinTurnOrDeadline(new Promise<string>(() => {}), 20, () => new Error('late'));
      await expect(later).rejects.toThrow('late');
      await expect(lost).rejects.toThrow('lost');
    } finally {
      clock.mockRestore();
    }
  });

  it('answers what check makes of the value, or rejects with what check threw', async () => {
    const wrong = new Error('not a number');
    const check = (value: string) => {
      if (Number.isNaN(Number(value))) throw wrong;
      return Number(value);
    };
    const late = () => new Error('late');
    await expect(withinTurnOrDeadline(Promise.resolve('42'), 1000, late, check)).resolves.toBe(42);
    await expect(withinTurnOrDeadline(Promise.resolve('forty-two'), 1000, late, check)).rejects.toBe(wrong);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears the armed timer when the work settles after the turn', async () => {
    let finish: (value: string) => void = () => {};
    const slow = new Promise<string>((resolve) => {
      finish = resolve;
    });
    const timed = withinTurnOrDeadline(slow, 1000, () => new Error('late'));
    await vi.advanceTimersByTimeAsync(500);
    expect(vi.getTimerCount()).toBe(1);
    finish('in time');
    await expect(timed).resolves.toBe('in time');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers every failure through failed when given, and runs neither for work that lands late', async () => {
    const failed = (error: unknown) => `failed: ${(error as Error).message}`;
    const wrong = () => {
      throw new Error('no answer');
    };
    const late = () => new Error('late');
    const refused = Promise.reject(new Error('refused'));
    await expect(withinTurnOrDeadline(refused, 1000, late, String, failed)).resolves.toBe('failed: refused');
    await expect(withinTurnOrDeadline(Promise.resolve(1), 1000, late, wrong, failed)).resolves.toBe(
      'failed: no answer',
    );
    let land: (value: number) => void = () => {};
    const slow = new Promise<number>((resolve) => {
      land = resolve;
    });
    const checked: number[] = [];
    const check = (value: number) => String(checked.push(value));
    const timed = withinTurnOrDeadline(slow, 1000, late, check, failed);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(timed).resolves.toBe('failed: late');
    land(7);
    await slow;
    await vi.advanceTimersByTimeAsync(0);
    expect(checked).toEqual([]);
  });
});
