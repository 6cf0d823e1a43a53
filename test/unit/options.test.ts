import { describe, expect, it } from 'vitest';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { SECRET } from '../support/unit.js';

const numericOptions = [
  'maxBodyBytes',
  'leaseMs',
  'retentionMs',
  'concurrency',
  'maxQueue',
  'retryAfterSeconds',
  'handlerTimeoutMs',
] as const;

describe('numeric options', () => {
  for (const name of numericOptions) {
    it(`${name}: Infinity, NaN, fractions and negatives fail at creation, naming the option`, () => {
      for (const value of [Number.POSITIVE_INFINITY, Number.NaN, 1.5, -1]) {
        expect(() => createReceiver({ secrets: SECRET, [name]: value })).toThrow(WebhookConfigError);
        expect(() => createReceiver({ secrets: SECRET, [name]: value })).toThrow(name);
      }
    });
  }

  it('whole numbers are taken as they are; maxQueue may be 0 (no waiting, only running)', () => {
    expect(() => createReceiver({ secrets: SECRET, concurrency: 1, maxQueue: 0, leaseMs: 1 })).not.toThrow();
    expect(() => createReceiver({ secrets: SECRET, concurrency: 0 })).toThrow(
      'concurrency must be a whole number (1 or more), got 0.',
    );
  });
});

describe('one way to check an option', () => {
  it('a whole number below its floor is refused in the same words by the receiver, the stores and the workers', async () => {
    const { MemoryDedupeStore } = await import('../../src/stores/memory.js');
    const { retrySchedule } = await import('../../src/durable/job-run.js');
    const { deadLetters } = await import('../../src/durable/dead-letters.js');
    const refusals = [
      () => createReceiver({ secrets: SECRET, concurrency: 0 }),
      () => new MemoryDedupeStore({ maxEntries: 0 }),
      () => retrySchedule({ attempts: 0 }),
      () => deadLetters({} as never, 0),
    ];
    for (const refuse of refusals) {
      expect(refuse).toThrow(WebhookConfigError);
      expect(refuse).toThrow(/ must be a whole number (of milliseconds )?\(1 or more\), got 0\.$/);
    }
  });
});
