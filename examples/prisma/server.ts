// A receiver whose handler writes through Prisma in the inbox's transaction: `npx prisma generate --schema
// examples/prisma/schema.prisma`, then run this file with a TypeScript runner. DATABASE_URL and WEBHOOK_SECRET
// configure it; the Message table is the app's (its migration, or the CREATE TABLE below for a try).
import { createServer } from 'node:http';
import { PrismaPg } from '@prisma/adapter-pg';
import { createReceiver } from 'messaging-webhooks';
import { createNodeHandler } from 'messaging-webhooks/node';
import { PrismaDedupeStore } from 'messaging-webhooks/prisma';
import { PrismaClient } from './generated/prisma/client.js';

const connectionString = process.env.DATABASE_URL;
if (!connectionString)
  throw new Error('Set DATABASE_URL, for example postgres://postgres@127.0.0.1:5432/test');
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString }) });
const store = new PrismaDedupeStore({ prisma, transactionTimeoutMs: 10_000 });
await store.migrate(); // or `prisma migrate dev` with the WebhookInbox model in the schema
await prisma.$executeRawUnsafe(
  'CREATE TABLE IF NOT EXISTS "Message" (id text PRIMARY KEY, status text NOT NULL)',
);

const receiver = createReceiver({ secrets: process.env.WEBHOOK_SECRET, store });
receiver.on('message.delivered', async (event, ctx) => {
  // ctx.tx is Prisma's transaction client: this write commits together with the "processed" mark, or not at all.
  await ctx.tx.message.upsert({
    where: { id: event.data.message_id },
    create: { id: event.data.message_id, status: 'delivered' },
    update: { status: 'delivered' },
  });
});

const server = createServer(createNodeHandler(receiver));
server.listen(Number(process.env.PORT ?? 3000));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    await prisma.$disconnect();
    process.exit(0);
  });
}
