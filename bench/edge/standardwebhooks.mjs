// Anchor: the same Worker verifying with the standardwebhooks package (no parsing schema, no dedupe).
import { Webhook } from 'standardwebhooks';

export default {
  async fetch(request, env) {
    const body = await request.text();
    try {
      const event = new Webhook(env.WEBHOOK_SECRET).verify(body, Object.fromEntries(request.headers));
      console.log(`${event.data.message_id} delivered`);
      return Response.json({ received: true });
    } catch {
      return new Response('invalid signature', { status: 401 });
    }
  },
};
