import { createNextRouteHandler } from 'messaging-webhooks/next';
import { receiver } from '../../../lib/webhooks.js';

export const dynamic = 'force-dynamic';

export const POST = createNextRouteHandler(receiver);
// Other methods reach the receiver too, which answers them 405 (Allow: POST) in the service's error shape.
export { POST as DELETE, POST as GET, POST as OPTIONS, POST as PATCH, POST as PUT };
