import { createReceiver } from 'messaging-webhooks';

/**
 * The example's one receiver, shared by every route: two receivers, each with its own memory dedupe store,
 * would each process a delivery of one event. It is kept on globalThis because Next.js may bundle each route
 * apart. It is created at the first request, never at import: `next build` imports every route with no
 * secret set.
 */
const STATE = Symbol.for('messaging-webhooks.example.next-app');

/** The secret the example falls back to when WEBHOOK_SECRET is not set: never use it in production. */
export const DEV_SECRET = 'whsec_dev_only_not_for_production';
const KEEP_EVENTS = 100;
const SLOW_MS = 300;

export function webhooks() {
  globalThis[STATE] ??= createWebhooks(process.env);
  return globalThis[STATE];
}

/** What the webhook routes mount: createNextRouteHandler and createNextPagesHandler call it at the first request. */
export const receiver = () => webhooks().receiver;

/**
 * What the routes of many accounts mount (`/api/webhooks/[account]`): one receiver that looks up the secrets of
 * the account the route names, at request time.
 */
export const accountsReceiver = () => webhooks().accounts;

function createWebhooks(env) {
  // `next dev` falls back to a development secret; in production a missing secret is answered
  // 500 receiver_misconfigured, with the reason on the server's console.
  const receiver = createReceiver({
    secrets: env.WEBHOOK_SECRET || (env.NODE_ENV === 'production' ? undefined : DEV_SECRET),
    ...(env.MAX_BODY_BYTES ? { maxBodyBytes: Number(env.MAX_BODY_BYTES) } : {}),
    ...(env.BODY_TIMEOUT_MS ? { bodyTimeoutMs: Number(env.BODY_TIMEOUT_MS) } : {}),
  });
  // Many accounts, one route: the account is `?tenant=` when the URL has one, else the route's [account]
  // segment; its secrets are looked up when a delivery for it comes (here from WEBHOOK_SECRETS_BY_ACCOUNT; in an
  // app, from its database).
  const accounts = createReceiver({
    tenant: (request) =>
      new URL(request.url ?? '/', 'http://localhost').searchParams.get('tenant') ?? request.params.account,
    secrets: secretsLookup(env),
    ...(env.LOOKUP_TIMEOUT_MS ? { tenantSecrets: { timeoutMs: Number(env.LOOKUP_TIMEOUT_MS) } } : {}),
    ...(env.MAX_BODY_BYTES ? { maxBodyBytes: Number(env.MAX_BODY_BYTES) } : {}),
    ...(env.BODY_TIMEOUT_MS ? { bodyTimeoutMs: Number(env.BODY_TIMEOUT_MS) } : {}),
  });
  /** The last events the handlers processed, newest last: GET /api/webhooks/events lists them. */
  const handled = [];
  for (const each of [receiver, accounts]) handleEvents(each, env, handled);
  return { receiver, accounts, handled };
}

/**
 * The accounts' secrets from WEBHOOK_SECRETS_BY_ACCOUNT (`{"acme": "whsec_…", "globex": ["whsec_new", "whsec_old"]}`:
 * a list while a secret rotates). An account not in it is answered 401 unknown_tenant. To watch the other
 * answers: the lookup for SIMULATE_LOOKUP_FAILURE_ACCOUNT fails, and the one for SIMULATE_LOOKUP_HANG_ACCOUNT never
 * answers (both 503 tenant_lookup_failed with Retry-After, the second once LOOKUP_TIMEOUT_MS passed).
 */
function secretsLookup(env) {
  const byAccount = JSON.parse(env.WEBHOOK_SECRETS_BY_ACCOUNT || '{}');
  return async (account) => {
    if (account === env.SIMULATE_LOOKUP_FAILURE_ACCOUNT)
      throw new Error(`simulated lookup failure for ${account}`);
    if (account === env.SIMULATE_LOOKUP_HANG_ACCOUNT) await new Promise(() => {});
    return Object.hasOwn(byAccount, account) ? byAccount[account] : undefined;
  };
}

function handleEvents(receiver, env, handled) {
  const remember = (event, ctx) => {
    handled.push({
      id: event.id,
      type: event.type,
      messageId: event.data.message_id,
      to: event.data.to,
      ...(ctx.tenant ? { tenant: ctx.tenant } : {}),
    });
    if (handled.length > KEEP_EVENTS) handled.shift();
  };
  // To watch the retry paths: an event whose operator is SIMULATE_FAILURE_OPERATOR fails once (500, and the
  // service's retry is processed); one whose operator is SIMULATE_SLOW_OPERATOR takes 300 ms (a concurrent
  // delivery of it gets 409 event_in_progress).
  const failedOnce = new Set();
  receiver.on('message.delivered', async (event, ctx) => {
    const { operator } = event.data;
    if (operator === env.SIMULATE_FAILURE_OPERATOR && !failedOnce.has(event.id)) {
      failedOnce.add(event.id);
      throw new Error(`simulated failure for ${event.id}`);
    }
    if (operator === env.SIMULATE_SLOW_OPERATOR) await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    console.log(`${event.data.message_id} delivered to ${event.data.to}`);
    remember(event, ctx);
  });
  receiver.on('message.failed', (event, ctx) => {
    console.log(`${event.data.message_id} failed`);
    remember(event, ctx);
  });
  receiver.onError((error, ctx) =>
    console.error(`webhook ${ctx.requestId}: ${error.code}: ${error.message}`),
  );
}
