import { describe, expect, it } from 'vitest';
import { createNatsWorker, natsDeadLetters, natsQueue } from '../../src/durable/nats/index.js';
import {
  createRabbitmqWorker,
  rabbitmqDeadLetters,
  rabbitmqQueue,
} from '../../src/durable/rabbitmq/index.js';
import { createReceiver, WebhookConfigError } from '../../src/index.js';
import { SECRET } from '../support/unit.js';

const ledger = { connectionString: 'postgres://postgres@127.0.0.1:5432/test' };

describe('the broker engines refuse a wrong setup at once, naming what to pass', () => {
  it('rabbitmqQueue: no broker, no ledger, a table that is no PostgreSQL name', () => {
    expect(() => rabbitmqQueue({ ledger } as never)).toThrow(/rabbitmqQueue needs `url`/);
    expect(() => rabbitmqQueue({ url: 'amqp://127.0.0.1' } as never)).toThrow(
      /rabbitmqQueue needs its ledger's PostgreSQL: `pool` \(a pg Pool\) or `connectionString`/,
    );
    expect(() =>
      rabbitmqQueue({ url: 'amqp://127.0.0.1', ledger: { ...ledger, table: 'jobs; DROP' } }),
    ).toThrow(WebhookConfigError);
    expect(() => rabbitmqQueue({ url: 'amqp://127.0.0.1', ledger, attempts: 0 })).toThrow(
      /^attempts must be/,
    );
  });

  it('natsQueue: no servers, a stream name JetStream refuses, a replica count out of range', () => {
    expect(() => natsQueue({ ledger } as never)).toThrow(/natsQueue needs `servers`/);
    expect(() => natsQueue({ servers: 'nats://127.0.0.1:4222', ledger, name: 'a.b' })).toThrow(
      /name must be letters, digits, _ and -/,
    );
    expect(() => natsQueue({ servers: 'nats://127.0.0.1:4222', ledger, replicas: 0 })).toThrow(
      /^replicas must be/,
    );
  });

  it('the workers and dead letters take only a queue the engine made', async () => {
    const other = { enqueue: async () => 'enqueued' as const, name: 'x', engine: 'rabbitmq' as const };
    const receiver = createReceiver({ secrets: SECRET, queue: other });
    await expect(createRabbitmqWorker({ receiver, queue: other as never })).rejects.toThrow(
      /createRabbitmqWorker needs `queue`: the queue rabbitmqQueue\(…\) made/,
    );
    await expect(createNatsWorker({ receiver, queue: other as never })).rejects.toThrow(
      /createNatsWorker needs `queue`: the queue natsQueue\(…\) made/,
    );
    expect(() => rabbitmqDeadLetters({})).toThrow(/rabbitmqDeadLetters needs the `queue`/);
    expect(() => natsDeadLetters({})).toThrow(/natsDeadLetters needs the `queue`/);
  });
});
