// A Node app with @types/node that uses every entry point of the package.
import { createServer } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { createReceiver, type DurableWorker, MemoryDedupeStore } from 'messaging-webhooks';
import { createLambdaHandler } from 'messaging-webhooks/aws-lambda';
import { createAzureHandler } from 'messaging-webhooks/azure-functions';
import { webhookHandler } from 'messaging-webhooks/express';
import { webhooks } from 'messaging-webhooks/fastify';
import { createFetchHandler } from 'messaging-webhooks/fetch';
import { createCloudFunction } from 'messaging-webhooks/google-cloud-functions';
import { webhookMiddleware } from 'messaging-webhooks/koa';
import { createPagesHandler, createRouteHandler } from 'messaging-webhooks/next';
import { createNodeHandler } from 'messaging-webhooks/node';
import { openTelemetry } from 'messaging-webhooks/opentelemetry';
import { PostgresDedupeStore } from 'messaging-webhooks/postgres';
import { registerMetrics, registerWorkerMetrics } from 'messaging-webhooks/prometheus';
import { RedisDedupeStore } from 'messaging-webhooks/redis';
import { createEvent, createSignedRequest } from 'messaging-webhooks/testing';
import pg from 'pg';
import { Registry } from 'prom-client';
import { createClient } from 'redis';

const receiver = createReceiver({
  secrets: 'whsec_consumer_node',
  store: new MemoryDedupeStore(),
  tracing: openTelemetry(),
});
registerMetrics(receiver, { registry: new Registry() });
export const registerWorker = (worker: DurableWorker) =>
  registerWorkerMetrics(worker, { registry: new Registry(), labels: { queue: 'sms' } });

const redis = createClient({ url: 'redis://127.0.0.1:6379' });
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
export const stores = [new RedisDedupeStore({ client: redis }), new PostgresDedupeStore({ pool })];

const app = express();
app.post('/webhooks', webhookHandler(receiver));
const fastify = Fastify();
await fastify.register(webhooks, { receiver, path: '/webhooks' });

export const POST = createRouteHandler(() => receiver);
export default createPagesHandler(() => receiver);
export const fetchHandler = createFetchHandler(receiver);
export const server = createServer(createNodeHandler(receiver));
export const lambda = createLambdaHandler(receiver);
export const cloudFunction = createCloudFunction(() => receiver);
export const azure = createAzureHandler(receiver);
export const koa = webhookMiddleware(receiver, { path: '/webhooks' });
// A Cloud Function is handed Node's request and response, as Express types them.
export const gcfServer = createServer((req, res) => void cloudFunction(req, res));
export const signed = createSignedRequest(createEvent('message.delivered'), {
  secret: 'whsec_consumer_node',
});
