import { createNextRouteHandler } from 'messaging-webhooks/next';
import { accountsReceiver } from '../../../../lib/webhooks.js';

export const dynamic = 'force-dynamic';

// Every account on one route: the [account] segment reaches the receiver as request.params.account.
export const POST = createNextRouteHandler(accountsReceiver);
export { POST as DELETE, POST as GET, POST as OPTIONS, POST as PATCH, POST as PUT };
