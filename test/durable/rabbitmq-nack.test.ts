import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker } from '../../src/durable/rabbitmq/broker.js';
import { testRun } from '../support/harness/cluster.js';
import { until } from '../support/until.js';
import { RABBITMQ_URL } from './rabbitmq-engine.js';

const { run } = testRun();
const broker = new Broker({ url: RABBITMQ_URL }, `mw-${run}.nack`, 'test');
/** A queue that refuses every message (no room, overflow rejects the publish): RabbitMQ nacks each publish. */
const full = `mw-${run}.full`;

async function withPlainChannel(work: (channel: amqp.Channel) => Promise<unknown>): Promise<void> {
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    await work(await connection.createChannel());
  } finally {
    await connection.close().catch(() => {});
  }
}

describe('RabbitMQ: a nacked channel is not used again', () => {
  beforeAll(() =>
    withPlainChannel((channel) =>
      channel.assertQueue(full, {
        durable: true,
        arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
      }),
    ),
  );
  afterAll(async () => {
    await withPlainChannel(async (channel) => {
      for (const name of [full, ...broker.declared()]) await channel.deleteQueue(name);
    });
    await broker.close();
  });

  it("closes a worker's channel once RabbitMQ nacked a publish on it", async () => {
    const channel = await broker.channel();
    let closed = false;
    channel.on('close', () => {
      closed = true;
    });
    await expect(broker.publishText(full, 'k1', '{}', undefined, channel)).rejects.toThrow(/did not confirm/);
    await until(() => closed, { timeoutMs: 5_000, what: 'the nacked channel closed' });
  });

  it('opens another shared publishing channel after a nack', async () => {
    const first = await broker.publisher();
    await expect(broker.publishText(full, 'k2', '{}')).rejects.toThrow(/did not confirm/);
    const second = await broker.publisher();
    expect(second).not.toBe(first);
    await broker.publishText(broker.names.jobs, 'k3', '{}');
  });
});
