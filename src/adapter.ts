// The adapter kit: what a framework or platform adapter is built from, and nothing else. An adapter hands
// createAdapter a way to read its platform's request and a way to write the outcome; every in-tree adapter
// (adapters/) is built on this entry alone, so each is a template for the next platform. Store, engine, crypto
// and tracer authors import from messaging-webhooks/extend; applications from the root entry.
export { configError } from './base/errors.js';
export {
  type NodeBodySource,
  type NodeRequestLike,
  type NodeRequestParts,
  type NodeResponseLike,
  nodeBody,
  nodeRequest,
  readNodeBody,
  writeNodeOutcome,
} from './contract/node-io.js';
export { hostedHeaders, type Outcome } from './contract/outcome.js';
export {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  type BodyRead,
  type BodyReader,
  getHeader,
  type HeaderSource,
  type ReceiveRequest,
} from './contract/request.js';
export {
  readWebBody,
  toWebResponse,
  type WebBodyReader,
  type WebBodySource,
  type WebRequestContext,
  type WebRouteParams,
  webRequest,
} from './contract/web-io.js';
export { type AdapterSpec, createAdapter, mountedReceiver } from './receiver/adapter-kit.js';
export type { AdapterReceiver, ReceiverSource } from './receiver/source.js';
