import { testRun } from '../support/harness/cluster.js';
import { natsEngine } from './nats-engine.js';
import { describeDurableQueue } from './queue-conformance.js';

describeDurableQueue('NATS JetStream', natsEngine(testRun().run));
