import { createNextPagesHandler } from 'messaging-webhooks/next';
import { receiver } from '../../lib/webhooks.js';

// The same receiver on a Pages Router API route. Next's body parser must be off: the signature is over the
// raw bytes, and createNextPagesHandler reads them itself (a parsed body is answered 500 body_already_parsed).
export const config = { api: { bodyParser: false } };

export default createNextPagesHandler(receiver);
