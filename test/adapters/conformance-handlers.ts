import type { Receiver } from '../../src/index.js';
import { gate } from '../support/gate.js';

export const SECRET = 'whsec_conformance_secret';
/**
 * Every target mounts the webhook route with a parameter, `/webhooks/:account` in its framework's syntax, and
 * the suite posts to the route with this account: the handlers record the params the request came with.
 */
export const ACCOUNT = 'acme';

/**
 * The other tenants of the conformance receiver, one route for all (`/webhooks/:account`): the receiver looks
 * each request's account up (createConformanceOptions). ACCOUNT signs with SECRET.
 */
export const TENANTS = {
  /** A second account with a secret of its own. */
  other: { account: 'globex', secret: 'whsec_conformance_globex' },
  /** An account in the middle of a rotation: both secrets verify. */
  rotating: {
    account: 'initech',
    secrets: ['whsec_conformance_initech_new', 'whsec_conformance_initech_old'],
  },
  /** An account the lookup does not know (answered 401 unknown_tenant). */
  unknown: 'nobody-here',
  /** An account whose lookup throws (answered 503 tenant_lookup_failed). */
  failing: 'lookup-fails',
  /** An account whose lookup never answers (answered 503 once LOOKUP_TIMEOUT_MS passed). */
  hanging: 'lookup-hangs',
} as const;
/** The receiver's deadline for one secrets lookup: short, so the hanging lookup is answered quickly. */
export const LOOKUP_TIMEOUT_MS = 300;

type Secrets = string | readonly string[];

/** A tenant's secrets as the conformance receiver's lookup finds them, in any runtime. */
export function lookUpConformanceSecrets(
  account: string,
): Secrets | undefined | Promise<Secrets | undefined> {
  if (account === ACCOUNT) return SECRET;
  if (account === TENANTS.other.account) return Promise.resolve(TENANTS.other.secret);
  if (account === TENANTS.rotating.account) return TENANTS.rotating.secrets;
  if (account === TENANTS.failing) return Promise.reject(new Error('conformance: the secrets store is down'));
  if (account === TENANTS.hanging) return new Promise(() => {});
  return undefined;
}

/**
 * The receiver options every conformance target uses, besides its profile. `tenants` (the default profile's run):
 * one receiver for every account, the tenant read from the route's `account` parameter. A target whose platform
 * has no routes (the Functions Framework, Function URLs, load balancers) has the account read from the URL
 * instead, as its users would; a request to `/webhooks` itself is ACCOUNT's, so a target's own tests may post
 * there. A `tenant` in the query (its first value) names the account before the route does, as an app that
 * reads `?tenant=` would have it (a name of its own: Next's Pages router puts a dynamic segment over a query
 * parameter of the same name). `static` (the other profiles' runs): one secret, SECRET, fixed at creation, as most apps have it, so
 * every adapter's suite runs both ways of finding the secrets.
 */
export function createConformanceOptions(secrets: 'tenants' | 'static' = 'tenants') {
  if (secrets === 'static') return { secrets: SECRET, maxBodyBytes: MAX_BODY_BYTES };
  return {
    tenant: (request: { params: Readonly<Record<string, string | undefined>>; url: string | undefined }) =>
      tenantInQuery(request.url) ?? request.params.account ?? accountRoute(request.url)?.account ?? ACCOUNT,
    secrets: lookUpConformanceSecrets,
    tenantSecrets: { timeoutMs: LOOKUP_TIMEOUT_MS },
    maxBodyBytes: MAX_BODY_BYTES,
  };
}

export const MAX_BODY_BYTES = 64 * 1024;
/** The handler throws the first time it sees an event whose data.operator is this → 500 handler_failed. */
export const FAILING_OPERATOR = 'op_fail';
/**
 * The handler holds the event until a concurrent delivery of it was turned away with 409 event_in_progress
 * (the receiver's onRejected tells it), so that copy always finds it claimed.
 */
export const SLOW_OPERATOR = 'op_slow';
/** A deadline, not a pace: a receiver that never turns the copy away lets the handler go, and the case fails. */
const SLOW_HOLD_LIMIT_MS = 10_000;

export interface HandledEvent {
  id?: string;
  type: string;
  messageId?: string;
  to?: string;
  /** The route's parameters of the request that carried the event, as the adapter passed them. */
  params?: Record<string, string | undefined>;
  /** The tenant the handler saw in ctx.tenant. */
  tenant?: string;
}

type RouteParams = Record<string, string | undefined>;

/**
 * Registers the handlers every conformance target runs and returns what they saw. Takes the receiver, not
 * createReceiver, so that a runtime target can build it from the packed package while the in-process
 * targets build it from the sources.
 */
export function recordHandledEvents(receiver: Receiver): HandledEvent[] {
  const handled: HandledEvent[] = [];
  const paramsOf = recordRouteParams(receiver);
  // Fails once per event id, so the service's retry (same event, new timestamp) is processed.
  const failedOnce = new Set<string | undefined>();
  const turnedAway = copiesTurnedAway(receiver);
  receiver.on('message.delivered', async (event, ctx) => {
    if (event.data.operator === FAILING_OPERATOR && !failedOnce.has(event.id)) {
      failedOnce.add(event.id);
      throw new Error('conformance: handler failure the client must never see');
    }
    if (event.data.operator === SLOW_OPERATOR) await turnedAway(event.id as string);
    handled.push(record(event, ctx, paramsOf(ctx.requestId)));
  });
  receiver.on('message.failed', (event, ctx) => {
    handled.push(record(event, ctx, paramsOf(ctx.requestId)));
  });
  return handled;
}

/**
 * Wraps the receiver's `receive`, as the adapter calls it, to keep each request's route parameters under the
 * request id it is answered under (given here when the adapter gave none), where a handler finds them through
 * ctx.requestId.
 */
function recordRouteParams(receiver: Receiver): (requestId: string) => RouteParams | undefined {
  const byRequest = new Map<string, RouteParams>();
  const receive = receiver.receive.bind(receiver);
  receiver.receive = (request) => {
    request.requestId ??= newRequestId();
    const id = request.requestId;
    if (request.params !== undefined) byRequest.set(id, { ...request.params });
    return receive(request).finally(() => byRequest.delete(id));
  };
  return (requestId) => byRequest.get(requestId);
}

/** An id in the shape the receiver's own have, from Web Crypto: every runtime the targets run on has it. */
function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `req_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function record(
  event: { id?: string; type: string; data: { message_id?: string; to?: string } },
  ctx: { tenant?: string | undefined },
  params: RouteParams | undefined,
): HandledEvent {
  const seen: HandledEvent = { type: event.type };
  if (event.id !== undefined) seen.id = event.id;
  if (event.data.message_id !== undefined) seen.messageId = event.data.message_id;
  if (event.data.to !== undefined) seen.to = event.data.to;
  if (params !== undefined) seen.params = params;
  if (ctx.tenant !== undefined) seen.tenant = ctx.tenant;
  return seen;
}

/**
 * The route's parameters as a router matching `/webhooks/:account` reads them from a URL (a path or an absolute
 * URL), for the targets with no router of their own (node:http, a plain Fetch handler).
 */
export function accountRoute(url: string | undefined): RouteParams | undefined {
  const match = /^(?:[a-z]+:\/\/[^/]+)?\/webhooks\/([^/?#]+)(?:[?#]|$)/.exec(url ?? '');
  return match ? { account: decodeURIComponent(match[1] as string) } : undefined;
}

/** The first `tenant` of a URL's query (a path or an absolute URL), decoded; undefined without one. */
export function tenantInQuery(url: string | undefined): string | undefined {
  const query = url?.split('#', 1)[0]?.split('?')[1];
  return query === undefined ? undefined : (new URLSearchParams(query).get('tenant') ?? undefined);
}

/**
 * Resolves once a delivery of the event was answered 409 event_in_progress, or at SLOW_HOLD_LIMIT_MS. A copy
 * turned away before the handler asks (between the claim and the handler's start) counts too.
 */
function copiesTurnedAway(receiver: Receiver): (eventId: string) => Promise<void> {
  const gates = new Map<string, ReturnType<typeof gate>>();
  const gateOf = (eventId: string) => {
    const known = gates.get(eventId) ?? gate();
    gates.set(eventId, known);
    return known;
  };
  receiver.onRejected((rejection) => {
    if (rejection.reason === 'event_in_progress' && rejection.eventId) gateOf(rejection.eventId).open();
  });
  return async (eventId) => {
    let limit: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      gateOf(eventId).opened,
      new Promise((stop) => {
        limit = setTimeout(stop, SLOW_HOLD_LIMIT_MS);
      }),
    ]);
    clearTimeout(limit);
    gates.delete(eventId);
  };
}
