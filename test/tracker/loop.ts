import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler } from '../../adapters/node.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { createReceiver } from '../../src/index.js';
import type { StatusStore } from '../../src/tracker/store.js';
import { createMessageTracker, type MessageTracker } from '../../src/tracker/tracker.js';

export const SECRET = 'whsec_tracker_loop_5e4d3c2b1a0f9e8d';
export const SEND_KEY = 'sk_test_tracker_send';
export const STATUS_KEYS = ['sk_test_tracker_status_a', 'sk_test_tracker_status_b'] as const;

/** Two receivers (each its own tracker over its own store object) behind one address, taking turns. */
export interface Loop {
  emulator: Emulator;
  trackers: [MessageTracker, MessageTracker];
  /** How often each `message:status` transition handler ran, over both trackers. */
  runs: Map<string, number>;
  close(): Promise<void>;
}

export async function startLoop(options: {
  stores: [StatusStore, StatusStore];
  chaos?: { webhookLoss?: number; copies?: number; stale?: number };
  rateLimit: { requests: number; windowSeconds: number };
  seed?: number;
}): Promise<Loop> {
  const runs = new Map<string, number>();
  const trackers = options.stores.map((store) => {
    const tracker = createMessageTracker({ store });
    tracker.onTransition(({ messageId, to }) => {
      runs.set(`${messageId}:${to}`, (runs.get(`${messageId}:${to}`) ?? 0) + 1);
    });
    return tracker;
  }) as [MessageTracker, MessageTracker];
  const handlers = trackers.map((tracker) => {
    const receiver = createReceiver({ secrets: SECRET, tracker });
    receiver.on('message.delivered', () => {});
    return createNodeHandler(receiver);
  });
  let turn = 0;
  const server: Server = createServer((req, res) => {
    (handlers[turn++ % 2] as (typeof handlers)[number])(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  const emulator = await startEmulator({
    schedule: { submitMs: 5, resultMs: 10, jitterMs: 5, failureRate: 0.1 },
    retry: { baseMs: 5, capMs: 50 },
    test: { endpoint: url, secret: SECRET, keys: [SEND_KEY, ...STATUS_KEYS], rateLimit: options.rateLimit },
    chaos: options.chaos,
    seed: options.seed ?? 42,
  });
  return {
    emulator,
    trackers,
    runs,
    async close() {
      await emulator.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Where messages are sent and who expects them: the emulator, its send keys, and an expect call. */
export interface Sending {
  url: string;
  keys: readonly string[];
  /** Expects the `index`th message accepted. */
  expect(id: string, index: number): Promise<unknown>;
}

/** The loop's sending: its one send key, and its two trackers expecting in turn. */
export const sendingOf = (loop: Loop): Sending => ({
  url: loop.emulator.url,
  keys: [SEND_KEY],
  expect: (id, index) =>
    (loop.trackers[index % 2] as MessageTracker).expect(id, { to: '+15550100001', sentAt: Date.now() }),
});

/**
 * Sends `count` messages through the emulator's API and expects each one as soon as the emulator accepted it.
 * Each key sends one request after another, waiting out the 429s it is told, as one client does: a request
 * sent while a 429 to another request of the key is on its way back would reach the emulator after the wait
 * began, which it counts as a broken wait. More keys send faster.
 */
export async function sendAndExpect(sending: Sending, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const sender = async (key: string) => {
    while (next < count) {
      next++;
      for (;;) {
        const response = await fetch(`${sending.url}/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ to: '+15550100001', sender: 'Acme', body: 'Hello' }),
        });
        const body = (await response.json()) as { id?: string; error?: { retry_after_seconds: number } };
        if (response.status === 429) {
          // The protocol: a sender waits the retry_after_seconds the emulator's 429 asks for.
          const waitMs = (body.error?.retry_after_seconds ?? 1) * 1000 + 5;
          await new Promise((resolve) => setTimeout(resolve, waitMs));
          continue;
        }
        if (response.status !== 202) throw new Error(`The emulator answered ${response.status}.`);
        const id = body.id as string;
        ids.push(id);
        await sending.expect(id, ids.length - 1);
        break;
      }
    }
  };
  await Promise.all(sending.keys.map(sender));
  return ids;
}

/** Every message past its last step at the emulator, and every receipt it sent acknowledged or given up. */
export const emulatorSettled = (emulator: Emulator) =>
  [...emulator.state.messages.values()].every((m) => m.status === 'delivered' || m.status === 'failed') &&
  [...emulator.state.deliveries.values()].every((d) => d.state === 'acknowledged' || d.state === 'failed');
