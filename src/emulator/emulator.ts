import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApiContext, goLiveCheck } from './api.js';
import { Channels } from './channels.js';
import type { ConsoleContext } from './console-routes.js';
import { ApiError } from './http-io.js';
import { MessageLifecycle, type NewMessage } from './lifecycle.js';
import { type EmulatorMode, type EmulatorOptions, type ResolvedMode, resolveOptions } from './options.js';
import { seededRandom } from './random.js';
import { createRouter } from './router.js';
import { EmulatorState } from './state.js';
import { Timers } from './timers.js';
import { WebhookSender } from './webhooks.js';

export interface Emulator {
  /** The emulator's base address, e.g. `http://127.0.0.1:4010` (the API under /v1, the console at /). */
  readonly url: string;
  /** The seed of every random choice: pass it back as `seed` to replay a run. */
  readonly seed: number;
  /** Keys, endpoint and signing secret of each mode (of the first organization when there are several). */
  readonly modes: Readonly<Record<EmulatorMode, Readonly<ResolvedMode>>>;
  /** Each organization's keys, endpoints and signing secrets, by name (`default` without `organizations`). */
  readonly organizations: Readonly<Record<string, Readonly<Record<EmulatorMode, Readonly<ResolvedMode>>>>>;
  /** Everything recorded so far: messages, events, webhook deliveries with their attempts, campaigns. */
  readonly state: EmulatorState;
  /** Holds (true) or releases the deliveries to a mode's endpoint: one organization's, or every one's. */
  setPaused(mode: EmulatorMode, paused: boolean, organization?: string): void;
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
  const channels = new Channels(resolved);
  const webhooks = new WebhookSender(resolved, state, channels, timers, webhookRandom);
  const lifecycle = new MessageLifecycle(resolved, state, timers, webhooks, random);
  const send = (message: NewMessage) => lifecycle.create(message);

  const api: ApiContext = {
    options: resolved,
    state,
    channels,
    send,
  };
  const setPaused = (mode: EmulatorMode, paused: boolean, organization?: string) => {
    for (const channel of channels.all()) {
      const { settings } = channel;
      if (settings.mode === mode && (organization === undefined || settings.organization === organization))
        channel.gate.set(paused);
    }
    state.changed(undefined);
  };
  const consoleContext = consoleOf(api, webhooks, setPaused);

  const server = createServer(createRouter(resolved.allowedHosts, api, consoleContext));
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
    organizations: Object.fromEntries(resolved.organizations.map(({ name, modes }) => [name, modes])),
    state,
    setPaused,
    idle: () => webhooks.idle(),
    async close() {
      timers.close();
      webhooks.close();
      for (const channel of channels.all()) channel.gate.set(false);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** What the console needs of the emulator: its modes, a test message, redeliveries, the go-live check. */
function consoleOf(
  api: ApiContext,
  webhooks: WebhookSender,
  setPaused: (mode: EmulatorMode, paused: boolean, organization?: string) => void,
): ConsoleContext {
  const { options: resolved, state, send, channels } = api;
  return {
    state,
    organizations: resolved.organizations.map(({ name }) => name),
    modes: () =>
      channels.all().map(({ settings, gate }) => ({
        organization: settings.organization,
        mode: settings.mode,
        endpoint: settings.endpoint ?? null,
        paused: gate.paused,
      })),
    sendTestMessage: (organization, mode) => {
      const sender = [...resolved.senders][0] ?? 'Emulator';
      const body = 'A test message from the console.';
      return send({ organization, mode, kind: 'sms', to: '+15550100999', sender, body }).id;
    },
    redeliver: (eventId, kind) => {
      const event = state.events.get(eventId);
      if (!event) throw new ApiError(404, 'not_found', `event_id: no ${eventId}.`);
      return webhooks.redeliver(event, kind).id;
    },
    check: (organization, mode) => goLiveCheck(api, { organization, mode }),
    setPaused,
  };
}
