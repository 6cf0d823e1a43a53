import { MemoryDedupeStore } from '../../src/stores/memory.js';
import { describeStoreConformance } from './store-conformance.js';

let clock = Date.now();
const store = new MemoryDedupeStore({ now: () => clock });

describeStoreConformance('memory', () => ({
  store,
  leaseMs: 200,
  // Completions expire in whole seconds, so a second of slack.
  slackMs: 1000,
  advance: async (ms) => {
    clock += ms;
  },
}));
