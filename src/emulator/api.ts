import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { createId, isoTimestamp } from '../events/ids.js';
import { runChecks } from '../sending/go-live-checks.js';
import type { Channels } from './channels.js';
import { ApiError, readJson, sendJson } from './http-io.js';
import type { NewMessage } from './lifecycle.js';
import type { EmulatorMode, ResolvedOptions } from './options.js';
import { campaignRequest, describeIssue, groupQuery, messageRequest, otpRequest } from './schemas.js';
import type { CampaignRecord, EmulatorState, MessageRecord } from './state.js';

/** What the API needs of the emulator. */
export interface ApiContext {
  options: ResolvedOptions;
  state: EmulatorState;
  channels: Channels;
  send(message: NewMessage): MessageRecord;
}

/** Who is calling: the organization and mode the API key belongs to. */
interface Caller {
  organization: string;
  mode: EmulatorMode;
}

type Route = (ctx: ApiContext, caller: Caller, req: IncomingMessage, url: URL) => Promise<[number, unknown]>;

const routes: Record<string, Route> = {
  'POST /v1/messages': async (ctx, caller, req) => {
    const input = validate(messageRequest, await readJson(req));
    approved(ctx, input.sender);
    return [202, messageView(ctx.send({ ...caller, kind: 'sms', ...input }))];
  },
  'POST /v1/campaigns': async (ctx, caller, req) => {
    const input = validate(campaignRequest, await readJson(req));
    approved(ctx, input.sender);
    const template = ctx.options.templates.get(input.template_id);
    if (template === undefined)
      throw notFound('template_id', input.template_id, [...ctx.options.templates.keys()]);
    const group = ctx.options.groups.get(input.group_id);
    if (!group) throw notFound('group_id', input.group_id, [...ctx.options.groups.keys()]);
    const campaign: CampaignRecord = {
      id: createId('cmp_'),
      mode: caller.mode,
      ...input,
      message_ids: [],
      created_at: isoTimestamp(),
    };
    ctx.state.campaigns.set(campaign.id, campaign);
    for (const contact of group.contacts) {
      const body = template.replaceAll('{{name}}', contact.name);
      const message = ctx.send({
        ...caller,
        kind: 'campaign',
        to: contact.phone,
        sender: input.sender,
        body,
        campaign_id: campaign.id,
      });
      campaign.message_ids.push(message.id);
    }
    return [202, { ...campaign, status: 'queued', recipients: campaign.message_ids.length }];
  },
  'POST /v1/otp/send': async (ctx, caller, req) => {
    const { to, purpose, ttl_seconds } = validate(otpRequest, await readJson(req));
    const code = String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0');
    const body = `Your code is ${code}. It expires in ${Math.ceil(ttl_seconds / 60)} min.`;
    const message = ctx.send({
      ...caller,
      kind: 'otp',
      to,
      sender: 'OTP',
      body,
      otp: { purpose, ttl_seconds },
    });
    return [202, messageView(message)];
  },
  'GET /v1/contacts': async (ctx, _mode, _req, url) => {
    const id = url.searchParams.get('group_id');
    if (id === null)
      throw new ApiError(400, 'invalid_parameter', 'group_id: Required, e.g. ?group_id=grp_demo.');
    const parsed = groupQuery.safeParse(id);
    if (!parsed.success)
      throw new ApiError(400, 'invalid_parameter', `group_id: ${describeIssue(parsed.error)}`);
    const group = ctx.options.groups.get(id);
    if (!group) throw notFound('group_id', id, [...ctx.options.groups.keys()]);
    return [200, { group_id: group.id, name: group.name, data: group.contacts }];
  },
  'POST /v1/webhooks/test': async (ctx, caller) => [200, await goLiveCheck(ctx, caller)],
};

/**
 * The go-live check of an organization's mode's endpoint: the same checks as `messaging-webhooks check`. Its
 * valid event reaches the app's handlers; the answer lists every event it sent.
 */
export async function goLiveCheck(ctx: ApiContext, { organization, mode }: Caller) {
  const { settings, signer } = ctx.channels.get(organization, mode);
  const { endpoint, secret } = settings;
  if (endpoint === undefined) {
    const whose = ctx.options.organizations.length > 1 ? `${organization}'s ${mode}` : mode;
    throw new ApiError(
      409,
      'no_endpoint',
      `No webhook endpoint is registered for ${whose} mode: start the emulator with one.`,
    );
  }
  const checks = await runChecks(endpoint, { secret, profile: signer.profile });
  return { organization, url: endpoint, passed: checks.every((check) => check.passed), checks };
}

/** Status retrieval is not in the preview API: the emulator adds it, and says so in every answer. */
const EMULATOR_ONLY = /^\/v1\/messages\/(msg_[A-Za-z0-9]+)$/;

export async function handleApi(
  ctx: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  requestId: string,
): Promise<void> {
  const { caller, key, limiter } = authenticate(ctx, req);
  const early = limiter.early;
  const wait = limiter.take(key);
  if (limiter.early > early) ctx.state.brokenWaits++;
  if (wait > 0) {
    throw new ApiError(429, 'rate_limited', `Too many requests: wait ${wait} s before retrying.`, {
      retry_after_seconds: wait,
    });
  }
  const headers = { 'request-id': requestId };
  const single = EMULATOR_ONLY.exec(url.pathname);
  if (single && req.method === 'GET') {
    const message = ctx.state.messages.get(single[1] as string);
    const mine = message?.mode === caller.mode && message.organization === caller.organization;
    if (!message || !mine) throw notFound('message', single[1] as string);
    message.status_read_at = isoTimestamp();
    ctx.state.changed(message.id);
    sendJson(
      res,
      200,
      { ...message, object: 'message', emulator_only: true },
      { ...headers, 'emulator-only': 'true' },
    );
    return;
  }
  const route = routes[`${req.method} ${url.pathname}`];
  if (!route) {
    const known = Object.keys(routes).some((key) => key.endsWith(` ${url.pathname}`));
    throw known
      ? new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on ${url.pathname}.`)
      : new ApiError(404, 'not_found', `No endpoint ${req.method} ${url.pathname}.`);
  }
  const [status, body] = await route(ctx, caller, req, url);
  sendJson(res, status, body, headers);
}

function authenticate(ctx: ApiContext, req: IncomingMessage) {
  const header = req.headers.authorization;
  if (!header) {
    throw new ApiError(401, 'unauthorized', 'Missing API key: send Authorization: Bearer <API key>.');
  }
  const key = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (key === undefined) {
    throw new ApiError(
      401,
      'unauthorized',
      'Malformed Authorization header: send Authorization: Bearer <API key>.',
    );
  }
  const channel = ctx.channels.byKey(key);
  if (channel) {
    const { organization, mode } = channel.settings;
    return { caller: { organization, mode }, key, limiter: channel.limiter };
  }
  throw new ApiError(
    401,
    'unauthorized',
    'Unknown API key: send Authorization: Bearer <a test or live key the emulator printed when it started>.',
  );
}

function validate<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError(400, 'invalid_parameter', describeIssue(parsed.error));
  return parsed.data;
}

function approved(ctx: ApiContext, sender: string): void {
  if (ctx.options.senders.has(sender)) return;
  throw new ApiError(
    400,
    'invalid_parameter',
    `sender: '${sender}' is not approved for this organization. Approved: ${[...ctx.options.senders].join(', ')}.`,
  );
}

function notFound(field: string, id: string, known?: string[]): ApiError {
  const hint = known ? ` Known: ${known.join(', ') || 'none'}.` : '';
  return new ApiError(404, 'not_found', `${field}: no ${id}.${hint}`);
}

function messageView(message: MessageRecord) {
  // The preview API has no organizations: the key already says whose message it is.
  const { history: _history, events: _events, operator: _operator, organization: _org, ...rest } = message;
  return { ...rest, object: 'message' };
}
