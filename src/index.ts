// The application's entry: what an app that receives webhooks imports. Adapter, store and engine authors
// import from messaging-webhooks/adapter; tests from messaging-webhooks/testing.
export { RawBodyError, WebhookConfigError } from './base/errors.js';
export { WebhookHandlerError } from './contract/errors.js';
export { nodeCryptoProvider } from './crypto/node.js';
export { webCryptoProvider } from './crypto/web.js';
export {
  type Catalogue,
  type DefaultEvents,
  defaultEvents,
  type EventType,
  type KnownEvent,
  messageDelivered,
  messageFailed,
  type UnknownEvent,
} from './events/catalogue.js';
export {
  isNewerStatus,
  type MessageStatus,
  type StatusRecord,
  shouldApply,
  statusOfEvent,
} from './events/status-order.js';
export type { Logger } from './observability/logger.js';
export type { MetricsSnapshot } from './observability/metrics.js';
export type { ErrorContext, EventHandler, HandlerContext, WebhookRejection } from './receiver/handlers.js';
export type { ReceiverOptions } from './receiver/options.js';
export { createReceiver, type Receiver } from './receiver/receiver.js';
export {
  bodySignature,
  createProfile,
  createVerifier,
  defaultProfile,
  type SignatureProfile,
  standardWebhooks,
  verifySignature,
  verifySignatureAsync,
} from './signature/index.js';
export type { SignatureProfileConfig } from './signature/profile-config.js';
export type { Secrets } from './signature/secrets.js';
export { failOpen } from './stores/fail-open.js';
export { MemoryDedupeStore } from './stores/memory.js';
export type { DedupeStore } from './stores/types.js';
