import { afterAll } from 'vitest';
import { testRun } from '../support/harness/cluster.js';
import { describeDeadLetters } from './dead-letters-conformance.js';
import { rabbitmqHarness } from './rabbitmq-engine.js';

const harness = rabbitmqHarness(testRun().run);
describeDeadLetters('RabbitMQ', harness);
afterAll(() => harness.cleanup());
