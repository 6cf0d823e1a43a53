// The application's entry: what an app that receives webhooks imports, and every type its code names (the
// receiver's options, handlers, hooks and logger, signatures, stores and workers as an app configures them).
// Adapter authors import from messaging-webhooks/adapter, store, engine, crypto and tracer authors from
// messaging-webhooks/extend; tests from messaging-webhooks/testing. Small by purpose: nothing here is only for
// building an extension.

// Types the receiver's signatures name, so an app can name them too (types only: nothing at runtime).
export type { SignedPiece } from './base/bytes.js';
export { RawBodyError, WebhookConfigError } from './base/errors.js';
export type { DeliveryContext, Mode } from './contract/context.js';
export type { DeadLetterCode, ErrorCode } from './contract/errors.js';
export { WebhookHandlerError } from './contract/errors.js';
export type { ReasonCode, RejectionReason, SignatureFailureReason } from './contract/reasons.js';
export { nodeCryptoProvider } from './crypto/node.js';
export { webCryptoProvider } from './crypto/web.js';
export { DeadLetterError, type DeadLetterErrorCode } from './durable/dead-letter-error.js';
export type {
  ChangeOptions,
  DeadLetter,
  DeadLetterProgress,
  DeadLetterSelection,
  DeadLetters,
  PurgeResult,
  ReplayResult,
  SkippedDeadLetter,
  SkipReason,
} from './durable/dead-letters.js';
export type {
  DurableQueue,
  DurableQueueCounts,
  DurableQueueOptions,
  DurableWorker,
  DurableWorkerOptions,
  DurationCounts,
  RetryOptions,
  RunDurations,
  WorkerCounters,
} from './durable/port.js';
export type { CatalogueEvent, EventEnvelope } from './events/catalogue.js';
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
export type { RejectionDiagnostics, SignatureShape } from './observability/diagnostics.js';
export type { LineLogger, Logger, StructuredLogger } from './observability/logger.js';
export type { MetricsSeries, MetricsSnapshot } from './observability/metrics.js';
export type { TenantOf, TenantRequest } from './pipeline/2-tenant.js';
export type {
  AnyEventHandler,
  DefaultEventHandler,
  DefaultEventType,
  ErrorContext,
  ErrorHandler,
  EventHandler,
  HandlerContext,
  RejectionHandler,
  WebhookRejection,
} from './receiver/handlers.js';
export type { ModeHandling, ReceiverOptions } from './receiver/options.js';
export { createReceiver, type Receiver } from './receiver/receiver.js';
export type {
  SecretsLookup,
  TenantAccount,
  TenantSecretsAnswer,
  TenantSecretsOptions,
} from './receiver/tenant-secrets.js';
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
export type { BodyShapeProblem } from './signature/json-members.js';
export type { VerifyOptions } from './signature/one-shot.js';
export type { BodySignatureOptions } from './signature/presets.js';
export type { SignedRequestParts, VerifyResult } from './signature/profile.js';
export type {
  BodySignedContent,
  ContentTemplate,
  ResolvedConfig,
  SignatureLocation,
  SignatureProfileConfig,
  Slot,
  TimestampSource,
} from './signature/profile-config.js';
export type { TimestampOffset } from './signature/profile-text.js';
export type {
  SignatureProblem,
  SignatureReading,
  SignatureScan,
  SignatureSyntax,
} from './signature/reading.js';
export type { ModeSecrets, SecretFormat, SecretList, Secrets } from './signature/secrets.js';
export type { Tolerance, Verifier, VerifierOptions } from './signature/verifier.js';
export type { FailOpenOptions } from './stores/fail-open.js';
export { failOpen } from './stores/fail-open.js';
export type { MemoryDedupeStoreOptions } from './stores/memory.js';
export { MemoryDedupeStore } from './stores/memory.js';
export type { DedupeStore } from './stores/types.js';
