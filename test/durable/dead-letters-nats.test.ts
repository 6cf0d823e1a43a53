import { afterAll } from 'vitest';
import { testRun } from '../support/harness/cluster.js';
import { describeDeadLetters } from './dead-letters-conformance.js';
import { natsHarness } from './nats-engine.js';

const harness = natsHarness(testRun().run);
describeDeadLetters('NATS JetStream', harness);
afterAll(() => harness.cleanup());
