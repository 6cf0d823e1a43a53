import { describe, expect, it } from 'vitest';
import { MOST_SEEN, SEEN_FOR_MS, seenKeys } from '../../src/durable/ledger/seen-keys.js';

describe('seenKeys', () => {
  it('tells a key handed off lately from a new one, and forgets it once the window passed', () => {
    let now = 0;
    const seen = seenKeys(() => now);
    const keys = Array.from({ length: 1000 }, (_, i) => `live:evt_${i}`);
    expect(keys.filter((key) => seen.again(key))).toEqual([]);
    expect(keys.every((key) => seen.again(key))).toBe(true);
    now = SEEN_FOR_MS / 2 - 1;
    expect(keys.every((key) => seen.again(key))).toBe(true);
    now += SEEN_FOR_MS + 1;
    expect(keys.filter((key) => seen.again(key))).toEqual([]);
  });

  it('keeps the last half of MOST_SEEN keys, and takes few new keys for seen ones', () => {
    const seen = seenKeys(() => 0);
    const keys = Array.from({ length: MOST_SEEN * 2 }, (_, i) => `tenant:acme:live:evt_${i}_${i * 7919}`);
    const taken = keys.filter((key) => seen.again(key)).length;
    expect(taken).toBeLessThan(keys.length / 100);
    expect(keys.slice(-MOST_SEEN / 2).every((key) => seen.again(key))).toBe(true);
  });
});
