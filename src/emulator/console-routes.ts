import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, readJson, sendJson } from './http-io.js';
import type { EmulatorMode } from './options.js';
import type { EmulatorState } from './state.js';

/** What the console's actions need of the emulator. */
export interface ConsoleContext {
  state: EmulatorState;
  /** The organizations' names, in the order given (one, `default`, without `organizations`). */
  organizations: string[];
  modes(): { organization: string; mode: EmulatorMode; endpoint: string | null; paused: boolean }[];
  sendTestMessage(organization: string, mode: EmulatorMode): string;
  redeliver(eventId: string, kind: 'resend' | 'duplicate' | 'tampered'): string;
  check(organization: string, mode: EmulatorMode): Promise<unknown>;
  setPaused(mode: EmulatorMode, paused: boolean, organization: string): void;
}

/** Rows the console shows: the newest messages. */
const SHOWN = 100;
/** Changes are batched: under load a browser gets a few updates a second, not thousands. */
const FLUSH_MS = 150;

export function consoleState(ctx: ConsoleContext) {
  const messages = [...ctx.state.messages.keys()].slice(-SHOWN).reverse();
  return {
    organizations: ctx.organizations,
    modes: ctx.modes(),
    messages: messages.map((id) => ctx.state.view(id)),
  };
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

/** The organization an action names; the first one when it names none (a single-organization console). */
const organizationOf = (ctx: ConsoleContext, value: unknown): string => {
  if (value === undefined) return ctx.organizations[0] as string;
  if (typeof value === 'string' && ctx.organizations.includes(value)) return value;
  throw new ApiError(
    400,
    'invalid_parameter',
    `organization: Expected one of ${ctx.organizations.join(', ')}.`,
  );
};

const eventOf = (value: unknown): string => {
  if (typeof value === 'string' && value.startsWith('evt_')) return value;
  throw new ApiError(400, 'invalid_parameter', 'event_id: Expected an id starting with evt_.');
};

/** POST /console/actions: `{"action": …}` with the fields that action needs. */
export async function consoleAction(ctx: ConsoleContext, req: IncomingMessage, res: ServerResponse) {
  const body = (await readJson(req)) as Record<string, unknown> | null;
  const action = body?.action;
  const organization = () => organizationOf(ctx, body?.organization);
  switch (action) {
    case 'send':
      return sendJson(res, 202, { message_id: ctx.sendTestMessage(organization(), modeOf(body?.mode)) });
    case 'resend':
    case 'duplicate':
    case 'tampered':
      return sendJson(res, 202, { delivery_id: ctx.redeliver(eventOf(body?.event_id), action) });
    case 'check':
      return sendJson(res, 200, await ctx.check(organization(), modeOf(body?.mode)));
    case 'pause':
    case 'resume':
      ctx.setPaused(modeOf(body?.mode), action === 'pause', organization());
      return sendJson(res, 200, { modes: ctx.modes() });
    default:
      throw new ApiError(
        400,
        'invalid_parameter',
        'action: Expected send, resend, duplicate, tampered, check, pause or resume.',
      );
  }
}
