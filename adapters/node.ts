import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyReceiver } from './any-receiver.js';
import { receiveNodeRequest } from './node-io.js';

/** A node:http request listener: `http.createServer(createNodeHandler(receiver))`. */
export function createNodeHandler(
  receiver: AnyReceiver,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // receive() never rejects; only writing to a response someone else already wrote can.
    receiveNodeRequest(receiver, req, res).catch((error: Error) => res.destroy(error));
  };
}
