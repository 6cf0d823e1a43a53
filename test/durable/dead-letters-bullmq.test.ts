import { afterAll } from 'vitest';
import { testRun } from '../support/harness/cluster.js';
import { bullmqHarness } from './dead-letter-engines.js';
import { describeDeadLetters } from './dead-letters-conformance.js';

const harness = bullmqHarness(`mw-test:${testRun().run}:bull`);
describeDeadLetters('BullMQ', harness);
afterAll(() => harness.cleanup());
