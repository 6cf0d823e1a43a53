// A webhook receiver as a Cloudflare Worker. The receiver is created at the first request: a Worker's
// secrets arrive with the request's env, and Workers refuse random values at a module's global scope.
// Its dedupe store is a Durable Object per event, so every isolate and location of the Worker shares it.
import { createReceiver } from 'messaging-webhooks';
import { DedupeDurableObject, DurableObjectDedupeStore } from 'messaging-webhooks/cloudflare';
import { createFetchHandler } from 'messaging-webhooks/fetch';

// The class wrangler.toml binds as WEBHOOK_DEDUPE.
export { DedupeDurableObject };

let handleWebhook;

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname !== '/webhooks') {
      return Response.json({ webhooks: 'POST /webhooks' }, { status: 404 });
    }
    handleWebhook ??= createFetchHandler(() => {
      // Set it with `wrangler secret put WEBHOOK_SECRET` (the local runner passes it from the environment).
      const store = new DurableObjectDedupeStore({ namespace: env.WEBHOOK_DEDUPE });
      const receiver = createReceiver({ secrets: env.WEBHOOK_SECRET, store });
      receiver.on('message.delivered', (event, ctx) => {
        console.log(`[${ctx.requestId}] ${event.data.message_id} delivered to ${event.data.to}`);
      });
      receiver.on('message.failed', (event, ctx) => {
        console.log(`[${ctx.requestId}] ${event.data.message_id ?? 'unknown message'} failed`);
      });
      receiver.onError((error, ctx) => console.error(`[${ctx.requestId}] ${error.code}: ${error.message}`));
      return receiver;
    });
    // ctx.waitUntil keeps ack: 'async' work alive after the answer.
    return handleWebhook(request, ctx);
  },
};
