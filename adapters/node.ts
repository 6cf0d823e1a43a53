import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver } from '../src/index.js';
import { readNodeBody, writeNodeOutcome } from './node-io.js';

// biome-ignore lint/suspicious/noExplicitAny: a receiver of any catalogue and store can be mounted
type AnyReceiver = Receiver<any, any>;

/** A node:http request listener: `http.createServer(createNodeHandler(receiver))`. */
export function createNodeHandler(
  receiver: AnyReceiver,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void receiver
      .receive({
        method: req.method ?? 'GET',
        headers: req.headers,
        readBody: (maxBytes) => readNodeBody(req, maxBytes),
      })
      .then((outcome) => writeNodeOutcome(res, outcome));
  };
}
