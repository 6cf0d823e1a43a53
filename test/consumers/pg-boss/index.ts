// A worker fleet's app on pg-boss that never imports pg-boss's types itself: messaging-webhooks/pg-boss alone
// must compile with skipLibCheck off, whatever pg-boss's own declarations hold.
import { createReceiver } from 'messaging-webhooks';
import { createPgBossWorker, pgBossQueue } from 'messaging-webhooks/pg-boss';

const queue = pgBossQueue({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', name: 'webhooks' });
const receiver = createReceiver({ secrets: 'whsec_consumer_pg_boss', queue });
export const worker = await createPgBossWorker({ receiver, queue, concurrency: 4 });
export const started: Promise<unknown> = queue.boss.start();
