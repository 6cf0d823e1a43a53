import { describe, expect, it } from 'vitest';
import { enqueueIsBounded } from '../../src/base/deadline.js';
import { bullmqQueue } from '../../src/durable/bullmq/index.js';
import { natsQueue } from '../../src/durable/nats/index.js';
import { pgBossQueue } from '../../src/durable/pg-boss/index.js';
import { rabbitmqQueue } from '../../src/durable/rabbitmq/index.js';
import { DATABASE_URL, testRun } from '../support/harness/cluster.js';
import { RABBITMQ_URL } from './rabbitmq-engine.js';

const { run } = testRun();
const ledger = { connectionString: DATABASE_URL, table: `mw_bounded_${run}` };

// Each engine's enqueue rejects at the deadline the receiver passes it: the receiver arms no timer of its own.
describe("the engines' enqueue is bounded by its own deadline", () => {
  it.each([
    ['BullMQ', () => bullmqQueue({ connection: { host: '127.0.0.1', port: 6379 }, prefix: `mw-${run}` })],
    ['pg-boss', () => pgBossQueue({ connectionString: DATABASE_URL, schema: `mw_bounded_${run}` })],
    ['RabbitMQ', () => rabbitmqQueue({ url: RABBITMQ_URL, name: `mw-${run}.bounded`, ledger })],
    ['NATS', () => natsQueue({ servers: '127.0.0.1:4222', name: `mw-${run}-bounded`, ledger })],
  ])('%s', async (_engine, open) => {
    const queue = open();
    try {
      expect(enqueueIsBounded(queue)).toBe(true);
    } finally {
      await queue.close?.();
    }
  });
});
