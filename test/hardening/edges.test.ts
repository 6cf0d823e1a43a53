import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import express, { type Response } from 'express';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { webhookHandler } from '../../adapters/express.js';
import { webhooks } from '../../adapters/fastify.js';
import type { ClaimResult } from '../../src/extend.js';
import { createReceiver, MemoryDedupeStore } from '../../src/index.js';
import { HOOK_TIMEOUT_MS } from '../../src/receiver/handlers.js';
import type { DedupeStore } from '../../src/stores/types.js';
import { createEvent } from '../../src/testing.js';
import { gate } from '../support/gate.js';
import { signedDelivery } from '../support/independent-signing.js';
import { SECRET } from './targets.js';

const signedRequest = (event: object) => signedDelivery(JSON.stringify(event));

/** Whether `promise` is still pending after a few turns of the event loop (every ready callback has run). */
async function stillPending(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  for (let turn = 0; turn < 5; turn++) await nextTurn();
  return !settled;
}

/** A receiver acknowledging 202 whose handlers hold until `release` opens, counting the ones that finished. */
function heldReceiver() {
  const release = gate();
  const started: string[] = [];
  const finished: string[] = [];
  const receiver = createReceiver({ secrets: SECRET, ack: 'async' });
  receiver.onAny(async (event) => {
    started.push(String(event.id));
    await release.opened;
    finished.push(String(event.id));
  });
  return { receiver, release, started, finished };
}

describe('close() and handlers acknowledged 202', () => {
  it('close() without timeoutMs waits until every admitted handler has settled', async () => {
    const { receiver, release, finished } = heldReceiver();
    for (let i = 0; i < 4; i++) {
      expect((await receiver.receive(signedRequest(createEvent('message.delivered')))).status).toBe(202);
    }
    const closing = receiver.close({});
    expect(await stillPending(closing)).toBe(true);
    expect(finished).toHaveLength(0);
    release.open();
    await closing;
    expect(finished).toHaveLength(4);
  });

  it("Fastify's app.close() with the plugin's default options waits for them too", async () => {
    const { receiver, release, started, finished } = heldReceiver();
    const app = Fastify();
    await app.register(webhooks, { receiver, path: '/webhooks' });
    await app.ready();
    for (let i = 0; i < 3; i++) {
      const { rawBody, headers } = signedRequest(createEvent('message.delivered'));
      const response = await app.inject({ method: 'POST', url: '/webhooks', headers, payload: rawBody });
      expect(response.statusCode).toBe(202);
    }
    expect(started).toHaveLength(3);
    const closing = app.close();
    expect(await stillPending(closing)).toBe(true);
    release.open();
    await closing;
    expect(finished).toHaveLength(3);
  });
});

describe('close({ timeoutMs }) with a store claim that never answers', () => {
  it('every admitted request has its answer, 503 shutting_down, when close resolves', async () => {
    const claiming = gate();
    const store: DedupeStore = {
      claim() {
        claiming.open();
        return new Promise<never>(() => {});
      },
      complete: async () => true,
      renew: async () => true,
      release: async () => true,
    };
    // The store's own deadline is far away: only close() can answer the request in time.
    const receiver = createReceiver({ secrets: SECRET, store, storeTimeoutMs: 60_000 });
    const written: Response[] = [];
    const app = express();
    app.post('/webhooks', (_req, res, next) => {
      written.push(res);
      next();
    });
    app.post('/webhooks', webhookHandler(receiver));
    const server = await new Promise<ReturnType<typeof app.listen>>((listening) => {
      const started = app.listen(0, '127.0.0.1', () => listening(started));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const { rawBody, headers } = signedRequest(createEvent('message.delivered'));
      const answer = fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body: rawBody });
      answer.catch(() => {});
      await claiming.opened;
      await receiver.close({ timeoutMs: 1000 });
      expect(written.map((res) => res.writableEnded)).toEqual([true]);
      const response = await answer;
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('shutting_down');
    } finally {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    }
  });
});

describe('a subclass of MemoryDedupeStore', () => {
  it('has its own claim and complete called on every delivery', async () => {
    const calls: string[] = [];
    class AuditedStore extends MemoryDedupeStore {
      override claim(key: string, leaseMs: number): Promise<ClaimResult> {
        calls.push(`claim ${key}`);
        return super.claim(key, leaseMs);
      }
      override complete(key: string, token: string, retentionMs: number): Promise<boolean> {
        calls.push(`complete ${key}`);
        return super.complete(key, token, retentionMs);
      }
    }
    const receiver = createReceiver({ secrets: SECRET, store: new AuditedStore() });
    const event = createEvent('message.delivered');
    expect((await receiver.receive(signedRequest(event))).status).toBe(200);
    expect((await receiver.receive(signedRequest(event))).duplicate).toBe(true);
    expect(calls).toEqual([`claim live:${event.id}`, `complete live:${event.id}`, `claim live:${event.id}`]);
  });
});

describe('hooks that never answer', () => {
  it(`an onError hook that never settles holds the answer ${HOOK_TIMEOUT_MS} ms at most`, async () => {
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('message.delivered', () => {
      throw new Error('handler failed');
    });
    receiver.onError(() => new Promise(() => {}));
    const started = performance.now();
    const outcome = await receiver.receive(signedRequest(createEvent('message.delivered')));
    expect(outcome).toMatchObject({ status: 500, reason: 'handler_failed' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(HOOK_TIMEOUT_MS - 50);
    await receiver.close({ timeoutMs: 100 });
  }, 20_000);
});
