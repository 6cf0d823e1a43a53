// Anchor: the same Worker verifying with stripe-node's webhooks on Web Crypto, as Stripe documents for Workers.
import Stripe from 'stripe';

const crypto = Stripe.createSubtleCryptoProvider();

export default {
  async fetch(request, env) {
    const stripe = new Stripe(env.STRIPE_KEY, { httpClient: Stripe.createFetchHttpClient() });
    const body = await request.text();
    try {
      const event = await stripe.webhooks.constructEventAsync(
        body,
        request.headers.get('stripe-signature') ?? '',
        env.WEBHOOK_SECRET,
        undefined,
        crypto,
      );
      console.log(`${event.id} received`);
      return Response.json({ received: true });
    } catch {
      return new Response('invalid signature', { status: 401 });
    }
  },
};
