import { testRun } from '../support/harness/cluster.js';
import { describeDurableQueue } from './queue-conformance.js';
import { rabbitmqEngine } from './rabbitmq-engine.js';

describeDurableQueue('RabbitMQ', rabbitmqEngine(testRun().run));
