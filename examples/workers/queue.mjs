// What the receiver and the workers share: the durable queue (BullMQ on Redis by default, pg-boss on
// PostgreSQL with ENGINE=pg-boss) and the receiver with its typed handlers. The receiver process hands events
// to the queue; the worker processes run these same handlers on the jobs. QUEUE names the queue.
import { createExampleReceiver, exampleSecret } from '../example-receiver.mjs';

const engine = process.env.ENGINE ?? 'bullmq';

async function createQueue() {
  if (engine === 'pg-boss') {
    const { pgBossQueue } = await import('messaging-webhooks/pg-boss');
    const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    return pgBossQueue({ connectionString, name: process.env.QUEUE ?? 'sms_webhooks' });
  }
  const { createNodeRedisClient } = await import('bullmq');
  const { createClient } = await import('redis');
  const { bullmqQueue } = await import('messaging-webhooks/bullmq');
  const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
  client.on('error', (error) => console.error(`Redis: ${error.message}`));
  return bullmqQueue({
    connection: createNodeRedisClient(client),
    name: process.env.QUEUE ?? 'sms-webhooks',
    // Redis without appendonly yes and maxmemory-policy noeviction is refused (it can lose events answered
    // 202); ALLOW_VOLATILE_REDIS=1 accepts one for a try-out.
    allowVolatileRedis: process.env.ALLOW_VOLATILE_REDIS === '1',
  });
}

export const secret = exampleSecret();
export const queue = await createQueue();
export const receiver = createExampleReceiver(secret, { queue });
export const createWorker =
  engine === 'pg-boss'
    ? (await import('messaging-webhooks/pg-boss')).createPgBossWorker
    : (await import('messaging-webhooks/bullmq')).createBullmqWorker;
console.log(`Durable queue: ${engine}`);
