import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/base/executor.js';

describe('Slots', () => {
  it('holds items until removed, and lists the ones held', () => {
    const slots = new Slots<{ name: string }>();
    const a = { name: 'a' };
    const b = { name: 'b' };
    const slotA = slots.add(a);
    const slotB = slots.add(b);
    expect(slots.size).toBe(2);
    expect(slots.items()).toEqual([a, b]);
    slots.remove(slotA, a);
    expect(slots.size).toBe(1);
    expect(slots.holds(slotA, a)).toBe(false);
    expect(slots.holds(slotB, b)).toBe(true);
    expect(slots.items()).toEqual([b]);
  });

  it('reuses an emptied slot, and a second remove of the old item leaves the new one alone', () => {
    const slots = new Slots<string>();
    const first = slots.add('first');
    slots.remove(first, 'first');
    const second = slots.add('second');
    expect(second).toBe(first);
    slots.remove(first, 'first');
    expect(slots.holds(second, 'second')).toBe(true);
    expect(slots.size).toBe(1);
  });

  it('lets the caller remove items while going through a listing', () => {
    const slots = new Slots<number>();
    const held = [1, 2, 3].map((item) => ({ item, slot: slots.add(item) }));
    for (const item of slots.items()) {
      const entry = held.find((h) => h.item === item);
      if (entry) slots.remove(entry.slot, item);
    }
    expect(slots.size).toBe(0);
    expect(slots.items()).toEqual([]);
  });
});
