import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApiContext, goLiveCheck, handleApi } from './api.js';
import { CONSOLE_HTML } from './console-page.js';
import { type ConsoleContext, consoleAction, consoleState, streamConsole } from './console-routes.js';
import { guardRequest } from './host-guard.js';
import { ApiError, newRequestId, sendError, sendJson } from './http-io.js';
import { MessageLifecycle, type NewMessage } from './lifecycle.js';
import { type EmulatorMode, type EmulatorOptions, type ResolvedMode, resolveOptions } from './options.js';
import { seededRandom } from './random.js';
import { RateLimiter } from './rate-limit.js';
import { createSigner } from './signer.js';
import { EmulatorState } from './state.js';
import { Timers } from './timers.js';
import { WebhookSender } from './webhooks.js';

export interface Emulator {
  /** The emulator's base address, e.g. `http://127.0.0.1:4010` (the API under /v1, the console at /). */
  readonly url: string;
  /** The seed of every random choice: pass it back as `seed` to replay a run. */
  readonly seed: number;
  /** Keys, endpoint and signing secret of each mode. */
  readonly modes: Readonly<Record<EmulatorMode, Readonly<ResolvedMode>>>;
  /** Everything recorded so far: messages, events, webhook deliveries with their attempts, campaigns. */
  readonly state: EmulatorState;
  /** Holds (true) or releases the deliveries to a mode's endpoint. */
  setPaused(mode: EmulatorMode, paused: boolean): void;
  /** Resolves when no webhook request is in flight or waiting for a slot (retries may still be due). */
  idle(): Promise<void>;
  /** Stops the server and cancels every pending step and retry. */
  close(): Promise<void>;
}

/** Starts a local Messaging Service: its API, webhooks to your endpoint, and a web console. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = resolveOptions(options);
  // Two streams: the lifecycle's draws stay the same whatever the webhooks' retries draw in between.
  const random = seededRandom(resolved.seed);
  const webhookRandom = seededRandom(resolved.seed ^ 0x5bd1e995);
  const state = new EmulatorState();
  const timers = new Timers();
  const signers = {
    test: createSigner(resolved.modes.test.secret, resolved.profile),
    live: createSigner(resolved.modes.live.secret, resolved.profile),
  };
  const webhooks = new WebhookSender(resolved, state, signers, timers, webhookRandom);
  const lifecycle = new MessageLifecycle(resolved, state, timers, webhooks, random);
  const send = (message: NewMessage) => lifecycle.create(message);

  const api: ApiContext = {
    options: resolved,
    state,
    limiters: {
      test: new RateLimiter(resolved.modes.test.rateLimit),
      live: new RateLimiter(resolved.modes.live.rateLimit),
    },
    send,
    signatureProfile: (mode) => signers[mode].profile,
  };
  const setPaused = (mode: EmulatorMode, paused: boolean) => {
    webhooks.gates[mode].set(paused);
    state.changed(undefined);
  };
  const consoleContext: ConsoleContext = {
    state,
    modes: () =>
      (['test', 'live'] as const).map((mode) => ({
        mode,
        endpoint: resolved.modes[mode].endpoint ?? null,
        paused: webhooks.gates[mode].paused,
      })),
    sendTestMessage: (mode) => {
      const sender = [...resolved.senders][0] ?? 'Emulator';
      return send({ mode, kind: 'sms', to: '+15550100999', sender, body: 'A test message from the console.' })
        .id;
    },
    redeliver: (eventId, kind) => {
      const event = state.events.get(eventId);
      if (!event) throw new ApiError(404, 'not_found', `event_id: no ${eventId}.`);
      return webhooks.redeliver(event, kind).id;
    },
    check: (mode) => goLiveCheck(api, mode),
    setPaused,
  };

  const server = createServer((req, res) => {
    void route(req, res);
  });
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    try {
      guardRequest(req, resolved.allowedHosts);
      const url = new URL(req.url ?? '/', 'http://emulator.local');
      if (url.pathname.startsWith('/v1/')) return await handleApi(api, req, res, url, requestId);
      if (req.method === 'GET' && url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(CONSOLE_HTML);
        return;
      }
      if (req.method === 'GET' && url.pathname === '/console/state')
        return sendJson(res, 200, consoleState(consoleContext));
      if (req.method === 'GET' && url.pathname === '/console/stream')
        return streamConsole(consoleContext, req, res);
      if (req.method === 'POST' && url.pathname === '/console/actions')
        return await consoleAction(consoleContext, req, res);
      throw new ApiError(
        404,
        'not_found',
        `No endpoint ${req.method} ${url.pathname}: the API is under /v1, the console at /.`,
      );
    } catch (error) {
      if (res.headersSent) return void res.destroy();
      const known =
        error instanceof ApiError
          ? error
          : new ApiError(500, 'internal_error', 'The emulator failed on this request; see its output.');
      if (!(error instanceof ApiError)) console.error(error);
      sendError(res, known, requestId);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;

  return {
    url: `http://${host}:${port}`,
    seed: resolved.seed,
    modes: resolved.modes,
    state,
    setPaused,
    idle: () => webhooks.idle(),
    async close() {
      timers.close();
      webhooks.close();
      for (const mode of ['test', 'live'] as const) webhooks.gates[mode].set(false);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
