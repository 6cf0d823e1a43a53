import { webhooks } from '../../lib/webhooks.js';

// What the handlers processed, read through the Pages Router: Next.js 13 serves its two routers from separate
// worker processes, each with its own receiver, so the App Router's events route cannot list these.
export default function events(_request, response) {
  response.status(200).json({ events: webhooks().handled });
}
