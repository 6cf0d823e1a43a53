import { describe, it } from 'vitest';
import { MemoryDedupeStore } from '../../src/index.js';
import { expectQueuedEventRunsOnce, expectSlowHandlerRunsOnce } from '../support/lease-proof.js';

const LEASE_MS = 800;

describe('lease renewal, memory store', () => {
  it('a handler three times longer than the lease runs once while retries arrive', async () => {
    await expectSlowHandlerRunsOnce(new MemoryDedupeStore(), LEASE_MS);
  });

  it('an event waiting in the queue past its lease is not claimed again by a retry', async () => {
    await expectQueuedEventRunsOnce(new MemoryDedupeStore(), LEASE_MS);
  });
});
