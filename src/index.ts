export { RawBodyError, WebhookConfigError, WebhookHandlerError } from './base/errors.js';
export { type Outcome, REQUEST_ID_HEADER } from './contract/outcome.js';
export type { ReasonCode, RejectionReason, SignatureFailureReason } from './contract/reasons.js';
export {
  BODY_LENGTH_MISMATCH,
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  type BodyReader,
  getHeader,
  type HeaderSource,
  isJsonContentType,
  type ReceiveRequest,
} from './contract/request.js';
export { nodeCryptoProvider } from './crypto/node.js';
export {
  type AsyncCryptoProvider,
  type CryptoProvider,
  type DigestEncoding,
  defaultCryptoProvider,
  type HashName,
  type SyncCryptoProvider,
  webCryptoProvider,
} from './crypto/provider.js';
export type {
  DispatchingReceiver,
  DurableJob,
  DurableQueue,
  DurableQueueCounts,
  DurableQueueOptions,
  DurableWorker,
  DurableWorkerOptions,
  EnqueueResult,
  RetryOptions,
  WorkerCounters,
} from './durable/port.js';
export {
  type Catalogue,
  type CatalogueEvent,
  createEventParser,
  type DefaultEvents,
  defaultEvents,
  type EventEnvelope,
  type EventIssue,
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
  statusRank,
} from './events/status-order.js';
export type { RejectionDiagnostics, SignatureShape } from './observability/diagnostics.js';
export type {
  LineLogger,
  Logger,
  RequestLogFields,
  StructuredLogger,
} from './observability/logger.js';
export type { MetricsSeries, MetricsSnapshot } from './observability/metrics.js';
export type {
  AnyEventHandler,
  ErrorContext,
  ErrorHandler,
  EventHandler,
  HandlerContext,
  RejectionHandler,
  WebhookRejection,
} from './receiver/handlers.js';
export { DEFAULT_SIGNATURE_HEADER, type ReceiverOptions } from './receiver/options.js';
export { createReceiver, type Receiver } from './receiver/receiver.js';
export {
  type HeaderScan,
  type ParsedSignatureHeader,
  parseSignatureHeader,
  type SignatureSyntax,
} from './signature/header-syntax.js';
export {
  type BodySignatureOptions,
  type BodySignedContent,
  bodySignature,
  createProfile,
  createVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  defaultProfile,
  defaultScheme,
  resolveProfile,
  type SignatureLocation,
  type SignatureProfile,
  type SignatureProfileConfig,
  type SignatureReading,
  type SignatureScheme,
  type SignedDelivery,
  type SignedRequestParts,
  type SignOptions,
  signPayload,
  signPayloadAsync,
  signRequest,
  signRequestAsync,
  standardWebhooks,
  type TimestampSource,
  type Tolerance,
  type Verifier,
  type VerifierOptions,
  type VerifyOptions,
  type VerifyResult,
  verifySignature,
  verifySignatureAsync,
} from './signature/index.js';
export type { Mode, Secret, SecretFormat, Secrets } from './signature/secrets.js';
export { type FailOpenOptions, failOpen } from './stores/fail-open.js';
export { MemoryDedupeStore, type MemoryDedupeStoreOptions } from './stores/memory.js';
export type { ClaimResult, DedupeStore, StoreTx } from './stores/types.js';
