// A webhook receiver as a Cloudflare Worker. The receiver is created at the first request: a Worker's
// secrets arrive with the request's env, and Workers refuse random values at a module's global scope.
import { createReceiver } from 'messaging-webhooks';
import { createFetchHandler } from 'messaging-webhooks/fetch';

let handleWebhook;

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname !== '/webhooks') {
      return Response.json({ webhooks: 'POST /webhooks' }, { status: 404 });
    }
    handleWebhook ??= createFetchHandler(() => {
      // Set it with `wrangler secret put WEBHOOK_SECRET` (the local runner passes it from the environment).
      const receiver = createReceiver({ secrets: env.WEBHOOK_SECRET });
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
