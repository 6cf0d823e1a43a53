import { failOpen } from '../../src/stores/fail-open.js';
import { MemoryDedupeStore } from '../../src/stores/memory.js';
import { describeStoreConformance } from './store-conformance.js';

let clock = Date.now();
const store = new MemoryDedupeStore({ now: () => clock });
const target = {
  leaseMs: 200,
  // Completions expire in whole seconds, so a second of slack.
  slackMs: 1000,
  advance: async (ms: number) => {
    clock += ms;
  },
};

describeStoreConformance('memory', () => ({ store, ...target }));
// While the store answers, the fail-open wrapper must keep every guarantee of the store it wraps.
describeStoreConformance('failOpen(memory)', () => ({ store: failOpen(store), ...target }));
