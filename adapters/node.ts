import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createAdapter,
  nodeRequest,
  type ReceiveRequest,
  type ReceiverSource,
  writeNodeOutcome,
} from '../src/adapter.js';

export interface NodeHandlerOptions {
  /**
   * node:http has no routes: the parameters of a request, as your own routing reads them from `req.url`, for
   * the receiver's `tenant` option. Called only when the receiver asks for them.
   */
  params?: (req: IncomingMessage) => ReceiveRequest['params'];
}

/**
 * A node:http request listener: `http.createServer(createNodeHandler(receiver))`. Give it the receiver, or a
 * function that creates it at the first request.
 */
export function createNodeHandler(
  source: ReceiverSource,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { params } = options;
  const handle = createAdapter<[IncomingMessage, ServerResponse], void>(source, {
    name: 'messaging-webhooks/node',
    usage: 'http.createServer(createNodeHandler(receiver))',
    read: (req) => nodeRequest(req, params ? { params } : {}),
    write: (outcome, _req, res) => writeNodeOutcome(res, outcome),
  });
  // receive() never rejects; only writing to a response someone else already wrote can.
  return (req, res) => {
    handle(req, res).catch((error: Error) => res.destroy(error));
  };
}
