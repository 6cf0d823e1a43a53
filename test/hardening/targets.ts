import { createServer, type Server } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { webhookHandler } from '../../adapters/express.js';
import { webhooks } from '../../adapters/fastify.js';
import { createFetchHandler } from '../../adapters/fetch.js';
import { createNodeHandler } from '../../adapters/node.js';
import { createReceiver, type DedupeStore, type ReceiverOptions } from '../../src/index.js';
import { bridge } from '../support/fetch-bridge.js';
import { closeServer, listen } from '../support/http.js';

export const SECRET = 'whsec_hardening_secret';
/** Large enough for a signed body nested 100,000 levels deep to reach the JSON parser. */
export const MAX_BODY_BYTES = 256 * 1024;
/** Short, so the slow-body cases finish fast. */
export const BODY_TIMEOUT_MS = 300;

export const ADAPTERS = ['node:http', 'express', 'fastify', 'fetch'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface Target {
  /** The webhook route's URL. */
  url: string;
  port: number;
  /** Event ids the handlers ran, in order (one entry per run). */
  handled(): Promise<string[]>;
  close(): Promise<void>;
}

/** Starts a target of a suite: an adapter in this process, or a server of its own (Next.js). */
export type StartTarget = () => Promise<Target>;

type HardeningOptions = Partial<Omit<ReceiverOptions, 'store'>> & { store?: DedupeStore };

/** One adapter on a loopback port, every method routed to the receiver, handlers recording what ran. */
export async function startTarget(adapter: AdapterName, options: HardeningOptions = {}): Promise<Target> {
  const handled: string[] = [];
  const receiver = createReceiver({
    secrets: SECRET,
    maxBodyBytes: MAX_BODY_BYTES,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    ...options,
  });
  receiver.onAny((event) => {
    handled.push(String(event.id));
  });
  if (adapter === 'fastify') {
    const app = Fastify();
    await app.register(webhooks, { receiver, path: '/webhooks' });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      url: `${base}/webhooks`,
      port: Number(new URL(base).port),
      handled: async () => [...handled],
      close: () => app.close(),
    };
  }
  const server = nodeServer(adapter, receiver);
  const base = await listen(server);
  return {
    url: `${base}/webhooks`,
    port: Number(new URL(base).port),
    handled: async () => [...handled],
    close: async () => {
      await closeServer(server);
      await receiver.close();
    },
  };
}

function nodeServer(
  adapter: Exclude<AdapterName, 'fastify'>,
  receiver: ReturnType<typeof createReceiver>,
): Server {
  switch (adapter) {
    case 'node:http':
      return createServer(createNodeHandler(receiver));
    case 'express': {
      const app = express();
      app.all('/webhooks', webhookHandler(receiver));
      return createServer(app);
    }
    case 'fetch':
      return createServer(bridge(createFetchHandler(receiver)));
  }
}
