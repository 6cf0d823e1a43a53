import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, readJson, sendJson } from './http-io.js';
import type { EmulatorMode } from './options.js';
import type { EmulatorState } from './state.js';

/** What the console's actions need of the emulator. */
export interface ConsoleContext {
  state: EmulatorState;
  modes(): { mode: EmulatorMode; endpoint: string | null; paused: boolean }[];
  sendTestMessage(mode: EmulatorMode): string;
  redeliver(eventId: string, kind: 'resend' | 'duplicate' | 'tampered'): string;
  check(mode: EmulatorMode): Promise<unknown>;
  setPaused(mode: EmulatorMode, paused: boolean): void;
}

/** Rows the console shows: the newest messages. */
const SHOWN = 100;
/** Changes are batched: under load a browser gets a few updates a second, not thousands. */
const FLUSH_MS = 150;

export function consoleState(ctx: ConsoleContext) {
  const messages = [...ctx.state.messages.keys()].slice(-SHOWN).reverse();
  return { modes: ctx.modes(), messages: messages.map((id) => ctx.state.view(id)) };
}

/** Server-sent events: each changed message (with its attempts) as `message`, the modes as `modes`. */
export function streamConsole(ctx: ConsoleContext, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(`event: modes\ndata: ${JSON.stringify(ctx.modes())}\n\n`);
  const dirty = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    for (const id of dirty) res.write(`event: message\ndata: ${JSON.stringify(ctx.state.view(id))}\n\n`);
    dirty.clear();
    res.write(`event: modes\ndata: ${JSON.stringify(ctx.modes())}\n\n`);
  };
  const unsubscribe = ctx.state.subscribe((id) => {
    if (id !== undefined) dirty.add(id);
    timer ??= setTimeout(flush, FLUSH_MS);
  });
  req.on('close', () => {
    unsubscribe();
    if (timer) clearTimeout(timer);
  });
}

const modeOf = (value: unknown): EmulatorMode => {
  if (value === 'test' || value === 'live') return value;
  throw new ApiError(400, 'invalid_parameter', 'mode: Expected "test" or "live".');
};

const eventOf = (value: unknown): string => {
  if (typeof value === 'string' && value.startsWith('evt_')) return value;
  throw new ApiError(400, 'invalid_parameter', 'event_id: Expected an id starting with evt_.');
};

/** POST /console/actions: `{"action": …}` with the fields that action needs. */
export async function consoleAction(ctx: ConsoleContext, req: IncomingMessage, res: ServerResponse) {
  const body = (await readJson(req)) as Record<string, unknown> | null;
  const action = body?.action;
  switch (action) {
    case 'send':
      return sendJson(res, 202, { message_id: ctx.sendTestMessage(modeOf(body?.mode)) });
    case 'resend':
    case 'duplicate':
    case 'tampered':
      return sendJson(res, 202, { delivery_id: ctx.redeliver(eventOf(body?.event_id), action) });
    case 'check':
      return sendJson(res, 200, await ctx.check(modeOf(body?.mode)));
    case 'pause':
    case 'resume':
      ctx.setPaused(modeOf(body?.mode), action === 'pause');
      return sendJson(res, 200, { modes: ctx.modes() });
    default:
      throw new ApiError(
        400,
        'invalid_parameter',
        'action: Expected send, resend, duplicate, tampered, check, pause or resume.',
      );
  }
}
