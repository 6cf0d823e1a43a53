import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AdapterReceiver,
  type NodeRequestNames,
  type ReceiveRequest,
  receiveNodeRequest,
} from '../src/adapter.js';

export interface NodeHandlerOptions {
  /**
   * node:http has no routes: the parameters of a request, as your own routing reads them from `req.url`, for
   * the receiver's `tenant` option. Called only when the receiver asks for them.
   */
  params?: (req: IncomingMessage) => ReceiveRequest['params'];
}

/** A node:http request listener: `http.createServer(createNodeHandler(receiver))`. */
export function createNodeHandler(
  receiver: AdapterReceiver,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { params } = options;
  const names: NodeRequestNames<IncomingMessage> | undefined = params
    ? { url: (req) => req.url, route: () => undefined, params }
    : undefined;
  return (req, res) => {
    // receive() never rejects; only writing to a response someone else already wrote can.
    receiveNodeRequest(receiver, req, res, undefined, names).catch((error: Error) => res.destroy(error));
  };
}
