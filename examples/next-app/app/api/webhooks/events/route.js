import { webhooks } from '../../../../lib/webhooks.js';

export const dynamic = 'force-dynamic';

/** The last events the handlers processed, to see what a delivery did. */
export function GET() {
  return Response.json({ events: webhooks().handled });
}
