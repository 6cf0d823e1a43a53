/**
 * What a README fragment may assume, by name (`<!-- doc-test: prelude=receiver,express-app -->`). Each is
 * put above the fragment, so its names must not clash with the fragment's own imports.
 */
export const preludes: Record<string, string> = {
  receiver: [
    "import { createReceiver as createPreludeReceiver } from 'messaging-webhooks';",
    'const receiver = createPreludeReceiver({ secrets: process.env.WEBHOOK_SECRET });',
  ].join('\n'),
  'express-app': ["import express from 'express';", 'const app = express();'].join('\n'),
  'hono-app': ["import { Hono } from 'hono';", 'const app = new Hono();'].join('\n'),
  'web-runtimes': [
    'declare const Bun: { serve(options: { port: number; fetch(request: Request): Promise<Response> }): unknown };',
    'declare const Deno: { serve(handler: (request: Request) => Promise<Response>): unknown };',
  ].join('\n'),
  options: ["import { createReceiver } from 'messaging-webhooks';", 'declare const secrets: string;'].join(
    '\n',
  ),
  db: [
    '// biome-ignore lint/suspicious/noExplicitAny: any database',
    'declare const db: { messages: { find(id: string): Promise<any>; upsert(id: string, row: object): Promise<void> } };',
  ].join('\n'),
  'raw-body': [
    'declare const rawBody: string;',
    'declare const secret: string;',
    'declare const req: { headers: Record<string, string> };',
    'declare const event: object;',
  ].join('\n'),
  'redis-client': [
    "import type { RedisClientType } from 'redis';",
    "import { RedisDedupeStore } from 'messaging-webhooks/redis';",
    'declare const client: RedisClientType;',
    'declare const log: Console;',
  ].join('\n'),
};
