import {
  type NodeBodySource,
  type NodeRequestLike,
  type NodeRequestNames,
  type NodeResponseLike,
  nodeBodyReader,
  type ReceiverSource,
  receiveNodeRequest,
  receiverAtFirstRequest,
} from '../src/adapter.js';

const GCF_FIX =
  "The Functions Framework's body parsers keep the body's bytes in req.rawBody; it was missing: pass the " +
  'function the request the framework gave it, before anything replaced its rawBody.';

/**
 * The request an HTTP Cloud Function gets: Node's request, read by the Functions Framework's body parsers,
 * which keep the exact bytes in `rawBody`. Written out, so that its types need neither Express's nor Node's.
 */
export interface CloudFunctionRequest extends NodeRequestLike {
  readonly rawBody?: unknown;
  readonly originalUrl?: string;
}

export type CloudFunctionHandler = (req: CloudFunctionRequest, res: NodeResponseLike) => Promise<void>;

const GCF_NAMES: NodeRequestNames<CloudFunctionRequest> = {
  url: (req) => req.originalUrl ?? req.url,
  route: () => undefined,
};

/**
 * An HTTP Cloud Function (Cloud Run functions): `functions.http('webhooks', createCloudFunction(webhooks))` with
 * @google-cloud/functions-framework, or `export const webhooks = createCloudFunction(webhooks)`. Give it the
 * receiver, or a function that creates it at the first request. The framework reads the whole body before the
 * function runs and keeps its bytes in `req.rawBody`: that is what the signature is checked against.
 * The framework sends every path to the function, so there are no route parameters: a `tenant` option reads
 * the tenant from `request.url` instead.
 */
export function createCloudFunction(source: ReceiverSource): CloudFunctionHandler {
  const receiver = receiverAtFirstRequest(source);
  return (req, res) => receiveNodeRequest(receiver, req, res, bodySource(req), GCF_NAMES);
}

function bodySource(req: CloudFunctionRequest): NodeBodySource {
  const rawBody = req.rawBody;
  if (rawBody instanceof Uint8Array) return { rawBody };
  // No body (a GET), or a request no parser read: from the stream.
  return { readBody: nodeBodyReader(req), rawBodyHint: GCF_FIX };
}
