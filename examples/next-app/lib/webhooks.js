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

/** What the webhook routes mount: createRouteHandler and createPagesHandler call it at the first request. */
export const receiver = () => webhooks().receiver;

function createWebhooks(env) {
  // `next dev` falls back to a development secret; in production a missing secret is answered
  // 500 receiver_misconfigured, with the reason on the server's console.
  const receiver = createReceiver({
    secrets: env.WEBHOOK_SECRET || (env.NODE_ENV === 'production' ? undefined : DEV_SECRET),
    ...(env.MAX_BODY_BYTES ? { maxBodyBytes: Number(env.MAX_BODY_BYTES) } : {}),
    ...(env.BODY_TIMEOUT_MS ? { bodyTimeoutMs: Number(env.BODY_TIMEOUT_MS) } : {}),
  });
  /** The last events the handlers processed, newest last: GET /api/webhooks/events lists them. */
  const handled = [];
  const remember = (event) => {
    handled.push({ id: event.id, type: event.type, messageId: event.data.message_id, to: event.data.to });
    if (handled.length > KEEP_EVENTS) handled.shift();
  };
  // To watch the retry paths: an event whose operator is SIMULATE_FAILURE_OPERATOR fails once (500, and the
  // service's retry is processed); one whose operator is SIMULATE_SLOW_OPERATOR takes 300 ms (a concurrent
  // delivery of it gets 409 event_in_progress).
  const failedOnce = new Set();
  receiver.on('message.delivered', async (event) => {
    const { operator } = event.data;
    if (operator === env.SIMULATE_FAILURE_OPERATOR && !failedOnce.has(event.id)) {
      failedOnce.add(event.id);
      throw new Error(`simulated failure for ${event.id}`);
    }
    if (operator === env.SIMULATE_SLOW_OPERATOR) await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    console.log(`${event.data.message_id} delivered to ${event.data.to}`);
    remember(event);
  });
  receiver.on('message.failed', (event) => {
    console.log(`${event.data.message_id} failed`);
    remember(event);
  });
  receiver.onError((error, ctx) =>
    console.error(`webhook ${ctx.requestId}: ${error.code}: ${error.message}`),
  );
  return { receiver, handled };
}
