import {
  createAdapter,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeBody,
  nodeRequest,
  type ReceiverSource,
  writeNodeOutcome,
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

/**
 * An HTTP Cloud Function (Cloud Run functions): `functions.http('webhooks', createCloudFunctionHandler(webhooks))`
 * with @google-cloud/functions-framework, or `export const webhooks = createCloudFunctionHandler(webhooks)`. Give
 * it the receiver, or a function that creates it at the first request. The framework reads the whole body
 * before the function runs and keeps its bytes in `req.rawBody`: that is what the signature is checked against.
 * The framework sends every path to the function, so there are no route parameters: a `tenant` option reads
 * the tenant from `request.url` instead.
 */
export function createCloudFunctionHandler(source: ReceiverSource): CloudFunctionHandler {
  return createAdapter<[CloudFunctionRequest, NodeResponseLike], void>(source, {
    name: 'messaging-webhooks/google-cloud-functions',
    usage: "functions.http('webhooks', createCloudFunctionHandler(receiver))",
    read: (req) =>
      nodeRequest(req, {
        // No body (a GET), or a request no parser read: from the stream.
        body: nodeBody(req, { kept: req.rawBody, hint: GCF_FIX }),
        url: (req) => req.originalUrl ?? req.url,
      }),
    write: (outcome, _req, res) => writeNodeOutcome(res, outcome),
  });
}

/** @deprecated Renamed createCloudFunctionHandler (every adapter is `create<Platform>Handler`); removed in 0.3. */
export const createCloudFunction = createCloudFunctionHandler;
