import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AdapterReceiver, receiveNodeRequest } from '../src/adapter.js';

/** A node:http request listener: `http.createServer(createNodeHandler(receiver))`. */
export function createNodeHandler(
  receiver: AdapterReceiver,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // receive() never rejects; only writing to a response someone else already wrote can.
    receiveNodeRequest(receiver, req, res).catch((error: Error) => res.destroy(error));
  };
}
