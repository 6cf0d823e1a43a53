import { createNextPagesHandler } from 'messaging-webhooks/next';
import { accountsReceiver } from '../../../lib/webhooks.js';

// The accounts' route on the Pages Router: req.query holds the [account] segment, passed as request.params.
export const config = { api: { bodyParser: false } };

export default createNextPagesHandler(accountsReceiver);
